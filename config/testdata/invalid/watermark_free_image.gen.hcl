image "hero" {
  prompt         = "a lighthouse"
  watermark_free = true
}
