image "hero" {
  count  = -1
  prompt = "a lighthouse"
}
