image "hero" {
  promt = "a lighthouse"
}
