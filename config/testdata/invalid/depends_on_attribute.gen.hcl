image "a" {
  prompt = "one"
}

image "b" {
  prompt     = "two"
  depends_on = [image.a.id]
}
