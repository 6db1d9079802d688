genform {
  output_dir = "media"
  cache_dir  = "media/.cache"
}
