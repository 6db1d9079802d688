video "morph" {
  source_images = [for i in range(7) : "https://example.com/${i}.png"]
  frame_indices = [0, 5, 10, 15, 20, 25, 30]
  input_width   = 1280
  input_height  = 720
}
