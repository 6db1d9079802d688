image "hero" {
  prompt = "one"
}

output "id" { value = image.hero.id }
output "id" { value = image.hero.status }
