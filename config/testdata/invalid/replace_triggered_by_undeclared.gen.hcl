image "a" {
  prompt = "one"
  lifecycle {
    replace_triggered_by = [image.nope]
  }
}
