genform {
  output_dir = "out"
}

genform {
  state_file = "s.db"
}
