image "hero" {
  for_each = toset(["red", "../up"])
  prompt   = "a ${each.key} lighthouse"
}
