genform {
  cache_max_size = "lots"
}
