video "clip" {
  source_image = "https://example.com/a.png"
  duration     = 4.5
}
