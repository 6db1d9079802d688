image "a" {
  prompt = "one"
  dir    = "assets/shared"
}

image "b" {
  prompt = "two"
  dir    = "assets/shared"
}
