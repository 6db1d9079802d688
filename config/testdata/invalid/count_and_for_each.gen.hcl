image "hero" {
  count    = 2
  for_each = toset(["a", "b"])
  prompt   = "a lighthouse"
}
