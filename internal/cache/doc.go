// Package cache is genform's content-addressed store of output files:
// the bytes of generations that a change removed or overwrote, kept by
// their sha256 so that a later restore takes them back without asking the
// service for anything.
//
// It owns the cache directory's layout, putting files in (a hard link
// where the file system allows, a copy otherwise), taking them out
// (always checking the bytes against their sha256) and pruning the least
// recently used entries to a size budget. It does not know what a
// generation is, which files belong to which, or where the directory may
// be: the history in the state says which hashes matter, package workdir
// says where the cache lives, and the apply engine checks that path.
//
// # Layout
//
//	<dir>/sha256/<first two hex digits>/<64 hex digits>   an entry: the file's bytes
//	<dir>/tmp-*                                           a file being put in (removed on failure, and by Prune)
//
// An entry's modification time is when it was last put in or taken out,
// which is what Prune orders by. A hard link shares its inode with the
// output file it came from or went to; the budget counts only the entries
// that hold bytes no output file holds (one link), since only those cost
// space, and only those are pruned.
package cache
