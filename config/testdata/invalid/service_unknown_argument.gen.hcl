service {
  parralelism = 4
}
