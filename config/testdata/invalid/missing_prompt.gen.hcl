image "hero" {
  seed = 1
}
