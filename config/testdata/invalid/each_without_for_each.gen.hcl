image "hero" {
  count  = 2
  prompt = "lighthouse ${each.key}"
}
