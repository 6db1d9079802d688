image "hero" {
  prompt = "a lighthouse"
}

video "clip" {
  source_image = image.heor.outputs[0].media_url
}
