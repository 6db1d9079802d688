image "a" {
  prompt = "one"
  lifecycle {
    ignore_changes = [promt]
  }
}
