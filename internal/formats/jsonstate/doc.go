// Package jsonstate is the public JSON documents of what the state holds:
// the state document of show -json, the history document of history
// -json (whose entries the state document embeds), and the outputs
// document of output -json. Their FormatVersion is "1", and fields are
// only ever added. They encode the state's records, which are an on-disk
// concern and may change without the documents changing.
//
// What is made from a secret is replaced through package secrets. The
// state pull/push document, which round-trips the records exactly, is
// the state package's own (statefile.Document), not this one.
package jsonstate
