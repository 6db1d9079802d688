locals {
  brand = "ACME"
}

image "hero" {
  prompt = "a poster for ${local.brnad}"
}
