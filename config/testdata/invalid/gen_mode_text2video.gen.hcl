video "clip" {
  prompt   = "waves"
  gen_mode = "fast"
}
