image "hero" {
  prompt = "hero"
  lifecycel {
    prevent_destroy = true
  }
}
