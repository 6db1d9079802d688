locals {
  hero_id = image.hero.id
}

image "hero" {
  prompt = "hero ${local.hero_id}"
}
