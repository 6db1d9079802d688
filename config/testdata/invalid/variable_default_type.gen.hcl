variable "seed" {
  type    = number
  default = "forty-two"
}
