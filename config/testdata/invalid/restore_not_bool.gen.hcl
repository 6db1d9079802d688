genform {
  restore = "sometimes"
}
