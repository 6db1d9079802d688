service {
  prices = { imag = 0.02 }
}
