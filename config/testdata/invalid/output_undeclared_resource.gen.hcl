image "hero" {
  prompt = "hero"
}

output "url" {
  value = image.heroes.outputs[0].media_url
}
