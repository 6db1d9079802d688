video "clip" {
  prompt   = "waves"
  duration = 5
}
