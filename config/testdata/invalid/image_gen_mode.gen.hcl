image "a" {
  prompt   = "one"
  gen_mode = "smooth"
}
