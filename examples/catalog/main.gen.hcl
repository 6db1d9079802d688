# Catalog: one product photo per row of products.csv. Adding a row plans
# one new image, editing a row's colour replaces only that product's image,
# deleting a row deletes its file. Runs as it is on the built-in simulator:
#
#   genform plan
#   genform apply -auto-approve

variable "backdrop" {
  type    = string
  default = "plain light grey backdrop, soft studio light"
}

locals {
  # Keyed by SKU, so instances are image.product["MUG-001"] and reordering
  # the CSV changes nothing.
  products = { for p in csvdecode(file("products.csv")) : p.sku => p }
}

image "product" {
  for_each     = local.products
  prompt       = "product photo of a ${each.value.colour} ${each.value.name}, ${var.backdrop}"
  image_number = 1
  aspect_ratio = "1:1"
  seed         = 1234
  dir          = "generated/products/${each.key}"
}

output "photos" {
  value = { for sku, img in image.product : sku => img.outputs[0].path }
}
