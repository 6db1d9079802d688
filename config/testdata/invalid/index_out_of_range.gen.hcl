image "a" {
  count  = 2
  prompt = "frame ${count.index}"
}

video "clip" {
  source_image = image.a[5].outputs[0].media_url
}
