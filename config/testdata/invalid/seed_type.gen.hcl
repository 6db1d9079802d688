image "hero" {
  prompt = "a lighthouse"
  seed   = "lucky"
}
