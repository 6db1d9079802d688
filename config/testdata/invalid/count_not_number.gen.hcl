image "a" {
  prompt = "one"
}

image "b" {
  count  = "many"
  prompt = "two"
}
