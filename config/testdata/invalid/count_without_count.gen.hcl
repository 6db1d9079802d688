image "hero" {
  prompt = "lighthouse ${count.index}"
}
