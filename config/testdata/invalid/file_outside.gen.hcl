image "hero" {
  prompt = file("../secret.txt")
}
