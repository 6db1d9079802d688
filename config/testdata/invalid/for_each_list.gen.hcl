image "hero" {
  for_each = ["red", "blue"]
  prompt   = "a ${each.key} lighthouse"
}
