image "hero" {
  prompt = "a lighthouse"
  dir    = "assets/../../outside"
}
