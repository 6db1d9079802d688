image "hero" {
  prompt       = "a lighthouse"
  image_number = 5
}
