// Package atomicfile is genform's one way to write a file whole: readers,
// and a crash at any moment, see the old bytes or the new, never a part.
// Every file genform writes outside the state database goes through it:
// saved plans, the gallery, downloaded outputs, files rewritten by fmt, the
// lock holder record, and the simulator's jobs and signing key.
//
// It owns the sequence that makes a write atomic and durable: a temporary
// file in the target's directory (so the rename cannot cross file
// systems), an fsync of its bytes, a rename over the target, and an fsync
// of the directory so the rename itself survives a power cut (Windows
// cannot sync a directory and does not need to). On any failure before the
// rename the temporary file is removed and the target is left as it was.
//
// Writers of many files at once (an apply downloading its outputs) share
// a Group: on Linux one syncfs(2) then covers every write waiting for it,
// in the same order (the bytes before the rename, the rename before
// Write returns), where each write alone would make two syncs.
//
// Some targets are not files to replace:
//
//   - An existing target that is not a regular file (/dev/null, a FIFO, a
//     terminal) is opened and written to directly, as a shell redirection
//     would: renaming over it would put a regular file where a device was,
//     or, without permission to do that, fail a command like
//     "genform plan -out=/dev/null". Such a write is not atomic, and there
//     are no old bytes to keep.
//   - A symbolic link is followed, to the end of a chain of links, and the
//     file it names is replaced, as editors do: the link stays a link, and
//     the temporary file is made beside the file it names. A dangling link
//     creates the file it names.
//   - An existing directory is an error.
//
// With the RegularOnly option, a link, a device or a FIFO is an error
// too: the files genform keeps beside its state are written only as
// regular files.
//
// It does not create missing directories, lock anything, or decide names:
// callers choose the path, make its directory, and serialise writers of
// one path if they need to. Nor does it keep a replaced file's owner, group
// or extended attributes; permissions are set from the caller's perm, or
// kept with KeepPermissions. The state database itself is bbolt's, written
// in place under its own lock, and does not come here.
package atomicfile
