service {
  base_url = "ftp://gen.example.com"
}
