image "a" {
  prompt = "one"
}

service {
  token = image.a.id
}
