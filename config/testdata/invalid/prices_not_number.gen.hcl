service {
  prices = { image = "cheap" }
}
