locals {
  a = "x${local.b}"
  b = "y${local.a}"
}
