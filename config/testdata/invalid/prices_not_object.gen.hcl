service {
  prices = 0.02
}
