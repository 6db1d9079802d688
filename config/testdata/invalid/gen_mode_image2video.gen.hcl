video "clip" {
  source_image = "https://example.com/a.png"
  gen_mode     = "standard"
}
