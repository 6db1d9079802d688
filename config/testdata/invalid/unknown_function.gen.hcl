image "hero" {
  prompt = uper("a lighthouse")
}
