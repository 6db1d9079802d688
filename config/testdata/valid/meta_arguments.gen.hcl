# count, for_each, depends_on and lifecycle, as in Terraform.
variable "palette" {
  type    = set(string)
  default = ["red", "green"]
}

locals {
  sizes = { small = 720, large = 1080 }
}

image "swatch" {
  for_each   = var.palette
  prompt     = "a ${each.key} swatch"
  resolution = 720
}

image "poster" {
  for_each   = local.sizes
  prompt     = "poster in ${each.key}"
  resolution = each.value
  lifecycle {
    prevent_destroy = true
    ignore_changes  = [prompt, seed]
  }
}

image "frame" {
  count        = 3
  prompt       = "frame ${count.index + 1} of 3"
  image_number = 1
  seed         = 100 + count.index
  dir          = "assets/frames/${count.index}"
}

video "reel" {
  prompt     = "a reel of ${length(image.frame)} frames"
  depends_on = [image.frame, image.poster]
  duration   = 4
}

output "swatch_ids" {
  value = { for k, v in image.swatch : k => v.id }
}
