video "clip" {
  source_image = "data:text/plain;base64,aGk="
}
