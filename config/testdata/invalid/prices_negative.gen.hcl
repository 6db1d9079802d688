service {
  prices = { image = -0.02 }
}
