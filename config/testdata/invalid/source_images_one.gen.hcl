video "morph" {
  source_images = ["https://example.com/a.png"]
  frame_indices = [0]
  input_width   = 1280
  input_height  = 720
}
