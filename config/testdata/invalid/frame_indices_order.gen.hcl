video "morph" {
  source_images = [for i in range(3) : "https://example.com/${i}.png"]
  frame_indices = [0, 20, 10]
  input_width   = 1280
  input_height  = 720
}
