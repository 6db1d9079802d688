variable "style" {
  default = "noir"
}

image "hero" {
  prompt = "a lighthouse, ${var.styel}"
}
