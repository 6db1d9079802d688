image "a" {
  prompt = "after ${video.b.id}"
}

video "b" {
  source_image = image.a.outputs[0].media_url
}
