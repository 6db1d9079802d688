video "morph" {
  source_images = ["https://example.com/a.png", "https://example.com/b.png"]
  frame_indices = [0, 16]
  duration      = 2
  input_width   = 1280
  input_height  = 720
}
