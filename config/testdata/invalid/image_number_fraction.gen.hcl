image "hero" {
  prompt       = "a lighthouse"
  image_number = 2.5
}
