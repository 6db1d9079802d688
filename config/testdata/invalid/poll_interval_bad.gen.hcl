service {
  poll_interval = "5 sec"
}
