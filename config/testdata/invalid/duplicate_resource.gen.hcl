image "hero" {
  prompt = "one"
}

image "hero" {
  prompt = "two"
}
