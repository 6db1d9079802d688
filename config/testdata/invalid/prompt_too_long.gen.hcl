image "hero" {
  prompt = join("", [for i in range(683) : "ééé"])
}
