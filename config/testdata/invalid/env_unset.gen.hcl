image "hero" {
  prompt = env("GENFORM_TEST_SURELY_UNSET_VARIABLE")
}
