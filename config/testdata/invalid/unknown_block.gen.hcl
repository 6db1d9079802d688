# A misspelt block type.
imag "hero" {
  prompt = "a lighthouse"
}
