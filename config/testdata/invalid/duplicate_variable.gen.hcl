variable "style" {
  default = "a"
}

variable "style" {
  default = "b"
}
