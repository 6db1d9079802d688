image "hero" {
  prompt = "  "
}
