package workdir

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/genform/genform/statefile"
)

// TestCheckFile: a file is hashed only when its size or modification time
// differs from the record, so a file touched but not changed is still the
// recorded one, and one edited to the same size is not.
func TestCheckFile(t *testing.T) {
	data := []byte("the recorded bytes")
	sum := sha256.Sum256(data)
	for _, tc := range []struct {
		name    string
		disturb func(path string)
		record  func(o *statefile.Output)
		want    FileState
	}{
		{name: "as recorded", want: FileOK},
		{name: "touched, same bytes", want: FileOK,
			disturb: func(p string) { later := time.Now().Add(time.Hour); os.Chtimes(p, later, later) }},
		{name: "missing", want: FileMissing, disturb: func(p string) { os.Remove(p) }},
		{name: "a directory in its place", want: FileMissing, disturb: func(p string) { os.Remove(p); os.Mkdir(p, 0o755) }},
		{name: "never hashed", want: FileMissing, record: func(o *statefile.Output) { o.SHA256 = "" }},
		{name: "no path recorded", want: FileMissing, record: func(o *statefile.Output) { o.Path = "" }},
		{name: "another size", want: FileModified, disturb: func(p string) { os.WriteFile(p, []byte("longer than the recorded bytes"), 0o644) }},
		{name: "same size, other bytes", want: FileModified, disturb: func(p string) { os.WriteFile(p, []byte("THE RECORDED BYTES"), 0o644) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			abs := filepath.Join(dir, "out", "0.png")
			if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(abs, data, 0o644); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(abs)
			if err != nil {
				t.Fatal(err)
			}
			o := statefile.Output{Path: "out/0.png", Size: fi.Size(), ModTime: fi.ModTime(), SHA256: hex.EncodeToString(sum[:])}
			if tc.record != nil {
				tc.record(&o)
			}
			if tc.disturb != nil {
				tc.disturb(abs)
			}
			if got := CheckFile(dir, o); got != tc.want {
				t.Errorf("CheckFile = %d, want %d", got, tc.want)
			}
		})
	}
}

// A plan checks every output of every instance: on Linux, checking a file
// as recorded allocates its path and the path the system call is given,
// and nothing for what the call answers (os.Stat's FileInfo would be one
// more allocation a file).
func TestCheckFileAllocations(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("statFile reads into the stack on Linux; elsewhere it is os.Stat")
	}
	dir := t.TempDir()
	abs := filepath.Join(dir, "0.png")
	if err := os.WriteFile(abs, []byte("bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("bytes"))
	o := statefile.Output{Path: "0.png", Size: fi.Size(), ModTime: fi.ModTime(), SHA256: hex.EncodeToString(sum[:])}
	if got := CheckFile(dir, o); got != FileOK {
		t.Fatalf("CheckFile = %d, want FileOK", got)
	}
	if n := testing.AllocsPerRun(100, func() { CheckFile(dir, o) }); n > 2 {
		t.Errorf("checking a file as recorded allocates %v times, want at most 2", n)
	}
}
