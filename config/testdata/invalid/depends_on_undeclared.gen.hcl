image "a" {
  prompt     = "one"
  depends_on = [image.nope]
}
