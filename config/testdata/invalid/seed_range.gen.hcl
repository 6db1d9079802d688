image "hero" {
  prompt = "a lighthouse"
  seed   = 4294967296
}
