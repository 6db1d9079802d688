# The edges of the service's rules (package rules): every value here is the
# last one allowed, next to one that a file of testdata/invalid shows
# refused.

locals {
  base64_4k = join("", [for i in range(1000) : "AAAA"])
  base64_4m = join("", [for i in range(1000) : local.base64_4k])
}

image "edge_low" {
  prompt       = join("", [for i in range(512) : "éééé"]) # 2048 characters
  image_number = 1
  resolution   = 720
  aspect_ratio = "21:9"
  seed         = 0
}

image "edge_high" {
  prompt          = "edge"
  negative_prompt = join("", [for i in range(512) : "xxxx"])
  image_number    = 4.0 # whole: sent as 4
  resolution      = 1080
  aspect_ratio    = "1:1"
  seed            = 4294967295
}

video "edge_text" {
  prompt       = "waves"
  aspect_ratio = "16:9"
  gen_mode     = "enhanced"
  duration     = 2
  seed         = -1
}

video "edge_image" {
  # 10,484,022 bytes: just under 10 MiB.
  source_image = "data:image/png;base64,${local.base64_4m}${local.base64_4m}${join("", [for i in range(621) : local.base64_4k])}"
  gen_mode     = "smooth"
  duration     = 8
}

video "edge_frames" {
  source_images = [for i in range(6) : "https://example.com/frames/${i}.png?w=1280&h=720"]
  frame_indices = [0, 1, 2, 3, 4, 63]
  duration      = 8
  input_width   = 1
  input_height  = 8192
}

video "edge_default_duration" {
  source_images = ["https://example.com/a.png", "data:image/svg+xml;base64,PHN2Zy8+"]
  frame_indices = [0, 31]
  input_width   = 8192
  input_height  = 1
}
