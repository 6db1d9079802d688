package workdir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CheckInside refuses a path (relative to root) that leads outside root
// through a symbolic link on disk. Configured paths are checked as text
// when they are loaded; this check is the one that sees the disk, made
// before genform writes or removes anything there. Parts that do not
// exist yet are fine: genform creates them as plain directories.
func CheckInside(root, rel string) error {
	if root == "" {
		root = "."
	}
	rootAbs, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if clean == "." {
		return nil
	}
	parts := strings.Split(clean, string(filepath.Separator))
	cur := rootAbs
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return nil
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		// Where root itself leads is needed only now: resolving it for
		// every check was most of the system calls of one, and an apply
		// makes one for every file it downloads.
		rootReal, err := filepath.EvalSymlinks(rootAbs)
		if err != nil {
			return err
		}
		link := filepath.ToSlash(filepath.Join(parts[:i+1]...))
		real, err := filepath.EvalSymlinks(cur)
		if err != nil {
			return fmt.Errorf("%s: the symbolic link %s cannot be followed (%v); replace it with a directory inside the working directory", filepath.ToSlash(clean), link, err)
		}
		if r, err := filepath.Rel(rootReal, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return fmt.Errorf("%s leads outside the working directory through the symbolic link %s (to %s); genform only writes inside the working directory: replace the link with a directory", filepath.ToSlash(clean), link, real)
		}
	}
	return nil
}
