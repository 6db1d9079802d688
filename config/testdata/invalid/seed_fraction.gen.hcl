video "clip" {
  prompt = "waves"
  seed   = 1.5
}
