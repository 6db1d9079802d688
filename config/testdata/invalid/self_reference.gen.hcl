image "a" {
  prompt = "again ${image.a.id}"
}
