service {
  requests_per_minute = 1e8
}
