# Storyboard: three key frames drawn as images, then a video that moves
# through them (key-frame conditioning), and a short vertical teaser from
# text alone. Runs as it is on the built-in simulator:
#
#   genform apply -auto-approve
#   genform gallery            # then open gallery.html

variable "scene" {
  type        = string
  default     = "a paper boat sailing down a rainy street"
  description = "What the whole storyboard is about."
}

locals {
  # One beat per key frame; the video passes through them in this order.
  beats = [
    "wide shot, the boat leaves the curb",
    "close up, the boat rides a wave from a passing bicycle",
    "the boat reaches a puddle reflecting the evening sky",
  ]
}

image "frame" {
  count        = length(local.beats)
  prompt       = "storyboard frame ${count.index + 1}: ${var.scene}, ${local.beats[count.index]}, watercolour"
  image_number = 1
  aspect_ratio = "16:9"
  resolution   = 720
  seed         = 7
}

# A key-frame video needs the pixel size of its source images: 16:9 at
# resolution 720 is 1280x720. A 4-second clip has frames 0 to 31.
video "storyboard" {
  source_images = [for f in image.frame : f.outputs[0].media_url]
  frame_indices = [0, 15, 31]
  input_width   = 1280
  input_height  = 720
  prompt        = "${var.scene}, smooth camera move between the key frames"
  duration      = 4
}

video "teaser" {
  prompt       = "title card: the paper boat, ${var.scene}"
  aspect_ratio = "9:16"
  duration     = 2
}

output "storyboard_file" {
  value = video.storyboard.outputs[0].path
}
