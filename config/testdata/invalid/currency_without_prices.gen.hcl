service {
  currency = "EUR"
}
