service {
  max_download_size = "four gigs"
}
