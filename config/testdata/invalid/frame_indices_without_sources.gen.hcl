video "clip" {
  prompt        = "waves"
  frame_indices = [0, 31]
}
