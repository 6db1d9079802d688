video "clip" {
  source_image = "https://example.com/my frame.png"
}
