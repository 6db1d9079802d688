package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

// The scripts' commands for a small disk: a full disk is how a state
// write fails in real life, and genform must not pay twice for it.

// tmpfs DIR SIZE mounts a tmpfs of SIZE (e.g. 512k) on DIR, keeping what
// DIR held, and unmounts it when the script ends.
func cmdTmpfs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: tmpfs DIR SIZE")
	}
	dir := ts.MkAbs(args[0])
	aside := dir + ".aside"
	ts.Check(os.MkdirAll(dir, 0o700))
	ts.Check(os.Rename(dir, aside))
	ts.Check(os.Mkdir(dir, 0o700))
	ts.Check(syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+args[1]))
	ts.Defer(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	out, err := exec.Command("cp", "-a", aside+"/.", dir).CombinedOutput()
	if err != nil {
		ts.Fatalf("copying %s into the tmpfs: %v\n%s", args[0], err, out)
	}
	ts.Check(os.RemoveAll(aside))
}

// fill DIR FREE writes DIR/filler so that FREE bytes (e.g. 40k) are left
// on DIR's file system.
func cmdFill(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: fill DIR FREE")
	}
	dir := ts.MkAbs(args[0])
	free, err := parseSize(args[1])
	ts.Check(err)
	var st syscall.Statfs_t
	ts.Check(syscall.Statfs(dir, &st))
	avail := int64(st.Bavail) * st.Bsize
	if avail <= free {
		ts.Fatalf("%s has %d bytes free, not more than %d", args[0], avail, free)
	}
	ts.Check(os.WriteFile(filepath.Join(dir, "filler"), make([]byte, avail-free), 0o600))
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1<<10, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "m"):
		mult, s = 1<<20, strings.TrimSuffix(s, "m")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}

// run-imports runs every "genform import ADDR ID" command the last
// command printed on stderr, as a user would paste them, and prints how
// many it ran.
func cmdRunImports(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: run-imports")
	}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(ts.ReadFile("stderr")))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		rest, ok := strings.CutPrefix(line, "genform import ")
		if !ok {
			continue
		}
		// The address is shell-quoted when it has a key; ids are plain.
		addr, id, ok := strings.Cut(rest, " ")
		if !ok {
			ts.Fatalf("not an import command: %s", line)
		}
		addr = strings.Trim(addr, "'")
		ts.Check(ts.Exec("genform", "import", addr, id))
		n++
	}
	fmt.Fprintf(ts.Stdout(), "ran %d imports\n", n)
}

// mount-ro DIR makes DIR read-only, as a checkout on a read-only volume or
// a CI cache mounted read-only is: a bind mount of DIR on itself, remounted
// read-only. Root ignores permission bits, so only a read-only mount shows
// what a command writes. It is unmounted when the script ends.
func cmdMountRO(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mount-ro DIR")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(syscall.Mount(dir, dir, "", syscall.MS_BIND, ""))
	ts.Defer(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	ts.Check(syscall.Mount("", dir, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""))
}
