video "clip" {
  prompt          = "waves"
  negative_prompt = join("", [for i in range(683) : "xxx"])
}
