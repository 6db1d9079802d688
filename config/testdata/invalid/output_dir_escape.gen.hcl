genform {
  output_dir = "../elsewhere"
}
