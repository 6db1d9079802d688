genform {
  cache_dir = "../cache"
}
