image "hero" {
  prompt = "a lighthouse"

image "other" {
  prompt = "b"
}
