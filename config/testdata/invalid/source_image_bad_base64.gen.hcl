video "clip" {
  source_image = "data:image/png;base64,!!!"
}
