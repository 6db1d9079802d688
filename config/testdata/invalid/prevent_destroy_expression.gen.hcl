variable "keep" {
  default = true
}

image "a" {
  prompt = "one"
  lifecycle {
    prevent_destroy = var.keep
  }
}
