# Quickstart: two images, a video animated from one of them, and a video
# from text alone. With no service block and no GENFORM_BASE_URL, genform
# uses its built-in simulator, so this runs as it is:
#
#   genform plan
#   genform apply -auto-approve

variable "style" {
  type        = string
  default     = "cinematic, golden hour"
  description = "Appended to every prompt."
}

locals {
  brand = "ACME"
}

image "hero" {
  prompt       = "a lighthouse on a cliff at dusk, ${var.style}"
  image_number = 2
  aspect_ratio = "16:9"
  seed         = 42
}

image "poster" {
  prompt       = "a minimalist poster of a sailing boat, ${var.style}"
  image_number = 1
  aspect_ratio = "3:4"
  resolution   = 1080
}

video "hero_motion" {
  source_image   = image.hero.outputs[0].media_url
  prompt         = "slow dolly in towards the lighthouse"
  gen_mode       = "enhanced"
  duration       = 4
  watermark_free = true
}

video "intro" {
  prompt       = "title card reading ${local.brand}, ${var.style}"
  aspect_ratio = "9:16"
  duration     = 2
}

output "hero_file" {
  value = image.hero.outputs[0].path
}
