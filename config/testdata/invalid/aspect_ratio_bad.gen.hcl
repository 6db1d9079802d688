image "hero" {
  prompt       = "a lighthouse"
  aspect_ratio = "5:4"
}
