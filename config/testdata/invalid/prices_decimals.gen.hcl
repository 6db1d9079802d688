service {
  prices = { image = 0.0000001 }
}
