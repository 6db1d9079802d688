variable "count_of_images" {
  type    = number
  default = 9
  validation {
    condition     = var.count_of_images <= 4
    error_message = "At most four images per request."
  }
}
