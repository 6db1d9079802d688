package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		path  string // written to, relative to the test's directory
		perm  os.FileMode
		opts  []Option
		// want is where the bytes must land, relative to the test's
		// directory, with what permission bits.
		want     string
		wantPerm os.FileMode
		// wantLink: path must still be a symbolic link afterwards.
		wantLink bool
	}{{
		name: "new file",
		path: "new.txt",
		// 0666 is narrowed to 0644 by the usual umask if perm is
		// not applied exactly.
		perm: 0o666, want: "new.txt", wantPerm: 0o666,
	}, {
		name:  "replaces a file and its permissions",
		setup: writeOld("f.txt", 0o600),
		path:  "f.txt", perm: 0o644, want: "f.txt", wantPerm: 0o644,
	}, {
		name:  "keeps the permissions of the file it replaces",
		setup: writeOld("f.hcl", 0o600),
		path:  "f.hcl", perm: 0o644, opts: []Option{KeepPermissions()},
		want: "f.hcl", wantPerm: 0o600,
	}, {
		name: "keeping permissions of a new file gives it perm",
		path: "f.hcl", perm: 0o640, opts: []Option{KeepPermissions()},
		want: "f.hcl", wantPerm: 0o640,
	}, {
		name: "replaces the file a symbolic link names",
		setup: func(t *testing.T, dir string) {
			writeOld("real.txt", 0o644)(t, dir)
			symlink(t, "real.txt", filepath.Join(dir, "link.txt"))
		},
		path: "link.txt", perm: 0o644, want: "real.txt", wantPerm: 0o644, wantLink: true,
	}, {
		name: "follows a chain of links",
		setup: func(t *testing.T, dir string) {
			writeOld("sub/real.txt", 0o644)(t, dir)
			symlink(t, "sub/real.txt", filepath.Join(dir, "one"))
			symlink(t, filepath.Join(dir, "one"), filepath.Join(dir, "two"))
		},
		path: "two", perm: 0o644, want: "sub/real.txt", wantPerm: 0o644, wantLink: true,
	}, {
		name: "a dangling link creates the file it names",
		setup: func(t *testing.T, dir string) {
			mkdir(t, filepath.Join(dir, "sub"))
			symlink(t, "sub/later.txt", filepath.Join(dir, "link"))
		},
		path: "link", perm: 0o600, want: "sub/later.txt", wantPerm: 0o600, wantLink: true,
	}, {
		// real/sub/f -> ../g is real/g, not dir/g as a lexical
		// clean of alias/../g would have it.
		name: "a relative link in a linked directory resolves from where that leads",
		setup: func(t *testing.T, dir string) {
			writeOld("real/g", 0o644)(t, dir)
			mkdir(t, filepath.Join(dir, "real", "sub"))
			symlink(t, filepath.Join(dir, "real", "sub"), filepath.Join(dir, "alias"))
			symlink(t, "../g", filepath.Join(dir, "real", "sub", "f"))
		},
		path: "alias/f", perm: 0o644, want: "real/g", wantPerm: 0o644, wantLink: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			path := filepath.Join(dir, tt.path)
			if err := WriteFile(path, []byte("new bytes\n"), tt.perm, tt.opts...); err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(dir, tt.want)
			if got := readFile(t, want); got != "new bytes\n" {
				t.Errorf("%s holds %q, want the new bytes", tt.want, got)
			}
			fi, err := os.Lstat(want)
			if err != nil {
				t.Fatal(err)
			}
			if !fi.Mode().IsRegular() {
				t.Errorf("%s is %v, want a regular file", tt.want, fi.Mode())
			}
			if runtime.GOOS != "windows" && fi.Mode().Perm() != tt.wantPerm {
				t.Errorf("%s has mode %v, want %v", tt.want, fi.Mode().Perm(), tt.wantPerm)
			}
			if tt.wantLink {
				if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
					t.Errorf("%s is no longer a symbolic link (%v)", tt.path, err)
				}
			}
			noTempFiles(t, dir)
		})
	}
}

func TestWriteFailureLeavesTargetAlone(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		path  string
		write func(w io.Writer) error
		// wantErr is checked with errors.Is when set, else the message
		// must contain the path and wantMsg.
		wantErr error
		wantMsg string
		// wantOld: path must still hold "old bytes\n"; otherwise it must
		// not exist, or (for a directory) still be one.
		wantOld bool
	}{{
		name:  "write fails halfway through a replacement",
		setup: writeOld("f.txt", 0o644),
		path:  "f.txt",
		write: func(w io.Writer) error {
			io.WriteString(w, "half of the new")
			return errBoom
		},
		wantErr: errBoom, wantOld: true,
	}, {
		name: "write fails for a new file",
		path: "new.txt",
		write: func(w io.Writer) error {
			io.WriteString(w, "half of the new")
			return errBoom
		},
		wantErr: errBoom,
	}, {
		name: "write fails through a symbolic link",
		setup: func(t *testing.T, dir string) {
			writeOld("real", 0o644)(t, dir)
			symlink(t, "real", filepath.Join(dir, "f.txt"))
		},
		path:    "f.txt",
		write:   func(w io.Writer) error { return errBoom },
		wantErr: errBoom, wantOld: true,
	}, {
		name:    "the target is a directory",
		setup:   func(t *testing.T, dir string) { mkdir(t, filepath.Join(dir, "d")) },
		path:    "d",
		write:   func(w io.Writer) error { t.Error("write called for a directory"); return nil },
		wantMsg: "is a directory",
	}, {
		name: "read-only directory",
		setup: func(t *testing.T, dir string) {
			if runtime.GOOS == "windows" || os.Geteuid() == 0 {
				t.Skip("a read-only directory does not stop root, and Windows ignores it")
			}
			writeOld("ro/f.txt", 0o644)(t, dir)
			ro := filepath.Join(dir, "ro")
			if err := os.Chmod(ro, 0o555); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(ro, 0o755) })
		},
		path:    "ro/f.txt",
		write:   func(w io.Writer) error { t.Error("write called without a temporary file"); return nil },
		wantMsg: "creating a temporary file", wantOld: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			path := filepath.Join(dir, tt.path)
			err := Write(path, 0o644, tt.write)
			switch {
			case err == nil:
				t.Fatal("Write succeeded, want an error")
			case tt.wantErr != nil && err != tt.wantErr:
				// Unchanged, not merely wrapped: the caller's own
				// error types and messages must survive.
				t.Errorf("Write returned %q, want write's error %q unchanged", err, tt.wantErr)
			case tt.wantErr == nil:
				msg := err.Error()
				if !strings.HasPrefix(msg, "writing "+path+": ") || !strings.Contains(msg, tt.wantMsg) {
					t.Errorf("error %q does not say it was writing %s and %q", msg, path, tt.wantMsg)
				}
				if strings.HasSuffix(msg, ".") {
					t.Errorf("error %q ends with a period", msg)
				}
			}
			switch fi, serr := os.Stat(path); {
			case tt.wantOld:
				if got := readFile(t, path); got != "old bytes\n" {
					t.Errorf("%s holds %q after a failed write, want the old bytes", tt.path, got)
				}
			case tt.setup != nil && serr == nil && fi.IsDir():
			case !errors.Is(serr, fs.ErrNotExist):
				t.Errorf("%s exists after a failed write of a new file (%v)", tt.path, serr)
			}
			noTempFiles(t, dir)
		})
	}
}

// TestWriteStreams checks what a streaming writer (the gallery, a download)
// relies on: many writes make one file, readers see the old one until Write
// returns, and the temporary file has the name the caller asked for.
func TestWriteStreams(t *testing.T) {
	dir := t.TempDir()
	writeOld("0.png", 0o644)(t, dir)
	path := filepath.Join(dir, "0.png")
	var want strings.Builder
	err := Write(path, 0o644, func(w io.Writer) error {
		for i := range 1000 {
			line := fmt.Sprintf("chunk %d\n", i)
			want.WriteString(line)
			if _, err := io.WriteString(w, line); err != nil {
				return err
			}
		}
		if got := readFile(t, path); got != "old bytes\n" {
			t.Errorf("while writing, a reader sees %q, want the old bytes", got)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		var temps []string
		for _, e := range entries {
			if e.Name() != "0.png" {
				temps = append(temps, e.Name())
			}
		}
		if len(temps) != 1 || !strings.HasPrefix(temps[0], ".0.") || !strings.HasSuffix(temps[0], ".genform-tmp") {
			t.Errorf("while writing, the directory holds %q beside 0.png, want one .0.*.genform-tmp", temps)
		}
		return nil
	}, TempPattern(".0.*.genform-tmp"))
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != want.String() {
		t.Errorf("0.png holds %d bytes, want the %d written", len(got), want.Len())
	}
	noTempFiles(t, dir)
}

// TestDevNull: "genform plan -out=/dev/null" must work, as non-root too
// (nobody may create files in /dev), and /dev/null must stay a device.
func TestDevNull(t *testing.T) {
	before, err := os.Stat(os.DevNull)
	if err != nil || before.Mode()&fs.ModeCharDevice == 0 {
		t.Skipf("%s is not a character device here (%v)", os.DevNull, err)
	}
	tests := []struct {
		name  string
		write func() error
	}{
		{"WriteFile", func() error { return WriteFile(os.DevNull, []byte("plan"), 0o600) }},
		{"Write", func() error {
			return Write(os.DevNull, 0o644, func(w io.Writer) error {
				_, err := io.WriteString(w, "<html>")
				return err
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.write(); err != nil {
				t.Fatal(err)
			}
			after, err := os.Stat(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			if after.Mode() != before.Mode() {
				t.Fatalf("%s is now %v, was %v", os.DevNull, after.Mode(), before.Mode())
			}
		})
	}
}

func writeOld(name string, perm os.FileMode) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		path := filepath.Join(dir, name)
		mkdir(t, filepath.Dir(path))
		if err := os.WriteFile(path, []byte("old bytes\n"), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, perm); err != nil {
			t.Fatal(err)
		}
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, oldname, newname string) {
	t.Helper()
	if err := os.Symlink(oldname, newname); err != nil {
		t.Skipf("cannot make symbolic links here: %v", err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noTempFiles fails the test if a temporary file is left anywhere in dir.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if strings.HasSuffix(d.Name(), ".tmp") || strings.HasSuffix(d.Name(), ".genform-tmp") {
			t.Errorf("temporary file left behind: %s", path)
		}
		return nil
	})
}
