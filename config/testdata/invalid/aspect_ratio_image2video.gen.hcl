video "clip" {
  source_image = "https://example.com/a.png"
  aspect_ratio = "16:9"
}
