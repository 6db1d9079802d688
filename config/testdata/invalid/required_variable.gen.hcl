variable "style" {
  type = string
}

image "hero" {
  prompt = "a lighthouse, ${var.style}"
}
