image "hero" {
  prompt = "a lighthouse"
  seed   = 1 / 0
}
