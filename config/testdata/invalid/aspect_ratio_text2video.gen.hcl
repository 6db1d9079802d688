video "clip" {
  prompt       = "waves"
  aspect_ratio = "16/9"
}
