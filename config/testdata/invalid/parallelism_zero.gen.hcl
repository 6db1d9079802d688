service {
  parallelism = 0
}
