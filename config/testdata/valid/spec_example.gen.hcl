genform {                          # optional, at most one
  state_file = ".genform/state.db" # default
  output_dir = "generated"         # default
}

service {                          # optional, at most one
  base_url      = "https://gen.example.com"  # unset and GENFORM_BASE_URL unset: the built-in simulator
  token         = env("GEN_TOKEN", "")           # default: GENFORM_TOKEN; never stored anywhere
  parallelism   = 10               # generations in flight at once
  requests_per_minute = 450        # one budget shared by every request genform sends
  poll_interval = "5s"             # the longest wait between two status polls of one job
  timeout       = "30m"            # per generation; past it the job is left resumable, not lost
}

variable "style" {
  type    = string
  default = "cinematic"
}

locals {
  brand = "ACME"
}

image "hero" {
  prompt          = "a lighthouse at dusk, ${var.style}"
  negative_prompt = "blurry"
  image_number    = 2              # 1..4, default 4
  aspect_ratio    = "16:9"         # '21:9','16:9','9:16','3:4','4:3','1:1'; default '16:9'
  resolution      = 1080           # 720 or 1080; default 720
  seed            = 42             # default -1 (random)
  is_public       = false          # genform's default is false: nothing is published unless asked
}

video "hero_motion" {              # image-to-video, because source_image is set
  source_image = image.hero.outputs[0].media_url
  prompt       = "slow dolly in"
  gen_mode     = "enhanced"        # 'smooth' | 'enhanced'; default 'smooth'
  duration     = 4
  watermark_free = true            # download the watermark-free file instead of the plain one
}

video "intro" {                    # text-to-video
  prompt       = "title card, ${local.brand}"
  gen_mode     = "standard"        # 'standard' | 'smooth' | 'enhanced'; default 'standard'
  aspect_ratio = "9:16"
}

video "morph" {                    # key-frame conditioning, because source_images is set
  source_images = [image.hero.outputs[0].media_url, file_data_uri("frames/end.png")]
  frame_indices = [0, 31]
  input_width   = 1280
  input_height  = 720
}

output "hero_file" { value = image.hero.outputs[0].path }
