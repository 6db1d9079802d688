video "clip" {
  source_image = "frames/start.png"
}
