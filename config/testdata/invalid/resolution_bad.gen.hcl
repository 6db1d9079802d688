image "hero" {
  prompt     = "a lighthouse"
  resolution = 900
}
