genform {
  state_file = "/tmp/state.db"
}
