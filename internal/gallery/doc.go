// Package gallery builds the static HTML page of genform gallery: every
// output the state records (images inline, videos playable) with its
// address, prompt, seed and creation id, and for what a run generated
// anew, the generation it replaced beside it, its files taken from the
// cache. The page needs no server and loads nothing from anywhere: files
// are embedded, or with link referenced by their path relative to the
// page.
//
// It reads the state snapshot, the history and the files it is given,
// hides what is made from a secret through package secrets, and writes the
// page atomically. It does not open the state (the command does, reading
// it as last committed).
package gallery
