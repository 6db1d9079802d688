package boltstate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/filetest"
)

// damagedFile writes a state file of n resources to a new directory,
// changes its bytes with damage, and returns its path and new bytes.
func damagedFile(t *testing.T, n int, damage func(t *testing.T, file []byte, pageSize int)) (string, []byte) {
	t.Helper()
	file := goodFile(t, n)
	damage(t, file, 4096)
	path := filepath.Join(t.TempDir(), "state.db")
	write(t, path, file)
	return path, file
}

// currentMeta decodes the meta page bbolt uses: the valid one with the
// higher transaction id.
func currentMeta(t *testing.T, file []byte, pageSize int) boltMeta {
	t.Helper()
	m0, err0 := parseMeta(file[:pageSize])
	m1, err1 := parseMeta(file[pageSize : 2*pageSize])
	switch {
	case err0 != nil && err1 != nil:
		t.Fatalf("no valid meta page: %v, %v", err0, err1)
	case err1 != nil, err0 == nil && m0.txid > m1.txid:
		return m0
	}
	return m1
}

// bucketRoot returns the page id of the resources bucket's root page.
func resourcesRoot(t *testing.T, file []byte) uint64 {
	t.Helper()
	path := filepath.Join(t.TempDir(), "copy.db")
	write(t, path, file)
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var root uint64
	if err := db.View(func(tx *bolt.Tx) error {
		root = uint64(tx.Bucket(bucketRoot).Bucket(bucketResources).Root())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return root
}

// wantCorrupt checks that err is a CorruptError about the file as a whole
// that says what, and that the file at path still holds want.
func wantCorrupt(t *testing.T, err error, path, what string, want []byte) {
	t.Helper()
	var ce *statefile.CorruptError
	if !errors.As(err, &ce) || ce.Record != "" {
		t.Fatalf("error = %v, want a CorruptError about the whole file", err)
	}
	for _, s := range []string{"state file " + path + " is not readable", what, "restore it from version control or a backup"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	if !bytes.Equal(filetest.ReadFile(t, path), want) {
		t.Errorf("the damaged file was changed")
	}
}

// A zeroed freelist page makes bbolt panic while it opens the file for
// writing ("invalid freelist page"): Open returns a CorruptError, leaves
// the file as it was, and releases the lock, so the next Open gets the
// same answer rather than a locked file.
func TestOpenDamagedFreelist(t *testing.T) {
	path, file := damagedFile(t, 50, func(t *testing.T, file []byte, pageSize int) {
		fl := currentMeta(t, file, pageSize).freelist
		clear(file[int(fl)*pageSize : int(fl+1)*pageSize])
	})
	for range 2 {
		_, err := Open(path, statefile.Options{Command: "plan"})
		wantCorrupt(t, err, path, "its pages are damaged (invalid freelist page", file)
	}
	if _, err := os.Lstat(path + infoSuffix); err == nil {
		t.Errorf("a refused Open left the lock holder file behind")
	}
	// A reader does not use the freelist: it reads the state as it is.
	s, err := Open(path, statefile.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("Open(ReadOnly): %v", err)
	}
	defer s.Close()
	if snap, err := s.Snapshot(); err != nil || len(snap.Resources) != 50 {
		t.Fatalf("Snapshot = %v resources, %v; want 50", snap, err)
	}
}

// A page whose id is not the one its parent names (here: zeroed) makes
// bbolt's page lookup panic on the first read through it, in a reader
// and in a writer alike.
func TestReadThroughDamagedPage(t *testing.T) {
	path, file := damagedFile(t, 300, func(t *testing.T, file []byte, pageSize int) {
		root := resourcesRoot(t, file)
		// The root is a branch page: damage the first leaf below it.
		if flags := binary.NativeEndian.Uint16(file[int(root)*pageSize+8:]); flags&0x01 == 0 {
			t.Fatalf("the resources bucket's root page %d is not a branch page (flags %#x)", root, flags)
		}
		leaf := binary.NativeEndian.Uint64(file[int(root)*pageSize+pageHeaderSize+8:])
		clear(file[int(leaf)*pageSize : int(leaf+1)*pageSize])
	})
	for _, opts := range []statefile.Options{{}, {ReadOnly: true}} {
		s, err := Open(path, opts)
		if err != nil {
			t.Fatalf("Open(%+v): %v", opts, err)
		}
		_, err = s.Snapshot()
		wantCorrupt(t, err, path, "its pages are damaged (assertion failed: Page expected to be", file)
		_, _, err = s.Addresses()
		wantCorrupt(t, err, path, "its pages are damaged", file)
		s.Close()
	}
}

// A branch element that names a page past the end of the file makes bbolt
// read outside its memory map: a fault, which Go does not let a program
// recover from unless asked (debug.SetPanicOnFault), or, far enough, index
// past its largest possible map. The read, and the check before a write,
// return a CorruptError instead of killing the process.
func TestPagePastTheEnd(t *testing.T) {
	for _, tt := range []struct {
		page uint64
		want string
	}{
		{1 << 20, "a page points outside the file"},
		{1 << 36, "its pages are damaged (runtime error: index out of range"},
	} {
		t.Run(fmt.Sprint(tt.page), func(t *testing.T) {
			path, file := damagedFile(t, 300, func(t *testing.T, file []byte, pageSize int) {
				root := resourcesRoot(t, file)
				binary.NativeEndian.PutUint64(file[int(root)*pageSize+pageHeaderSize+8:], tt.page)
			})
			s, err := Open(path, statefile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = s.Snapshot()
			wantCorrupt(t, err, path, tt.want, file)
			err = s.Update(func(tx *statefile.Tx) error { return tx.Record(sampleResource("image.new", 1)) })
			wantCorrupt(t, err, path, tt.want, file)
			if err := s.Check(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check = %v, want %q", err, tt.want)
			}
		})
	}
}

// A freelist that names a page still in use reads well, but the next write
// would reuse that page and overwrite records. The first write of a Store
// runs bbolt's consistency check and refuses it; reads still work.
func TestWriteRefusedOnInconsistentFreelist(t *testing.T) {
	path, file := damagedFile(t, 300, func(t *testing.T, file []byte, pageSize int) {
		root := resourcesRoot(t, file)
		fl := currentMeta(t, file, pageSize).freelist
		p := file[int(fl)*pageSize:]
		count := binary.NativeEndian.Uint16(p[10:])
		if count == 0xffff {
			t.Fatal("the freelist is too long for this test")
		}
		// Append the bucket's root, in use, to the free page ids (kept in
		// order, as bbolt writes them), with the last of the page's room.
		ids := make([]uint64, 0, count+1)
		for i := range int(count) {
			ids = append(ids, binary.NativeEndian.Uint64(p[pageHeaderSize+8*i:]))
		}
		ids = append(ids, root)
		for i := len(ids) - 1; i > 0 && ids[i] < ids[i-1]; i-- {
			ids[i], ids[i-1] = ids[i-1], ids[i]
		}
		binary.NativeEndian.PutUint16(p[10:], count+1)
		for i, id := range ids {
			binary.NativeEndian.PutUint64(p[pageHeaderSize+8*i:], id)
		}
	})
	s, err := Open(path, statefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if snap, err := s.Snapshot(); err != nil || len(snap.Resources) != 300 {
		t.Fatalf("Snapshot = %v, want the 300 resources, which read well", err)
	}
	for _, write := range []func() error{
		func() error {
			return s.Update(func(tx *statefile.Tx) error { return tx.Record(sampleResource("image.new", 1)) })
		},
		func() error {
			return s.Batch(func(tx *statefile.Tx) error { return tx.Record(sampleResource("image.new", 1)) })
		},
	} {
		err := write()
		wantCorrupt(t, err, path, "bbolt's consistency check finds", file)
		if !strings.Contains(err.Error(), "freed") {
			t.Errorf("error %q does not say the page is free and in use", err)
		}
	}
}

// A panic that is not bbolt's (a bug in the caller's function) is not
// damage: it is raised again, not reported as a corrupt file.
func TestGuardRaisesOtherPanics(t *testing.T) {
	s := openNew(t)
	defer func() {
		if r := recover(); r != "a bug" {
			t.Errorf("recovered %v, want the caller's own panic", r)
		}
	}()
	_ = s.Update(func(tx *statefile.Tx) error { panic("a bug") })
	t.Error("Update returned")
}

// A damaged file's message names the copy genform made before it last
// upgraded the file's schema, when there is one.
func TestCorruptErrorNamesTheBackup(t *testing.T) {
	path, file := damagedFile(t, 50, func(t *testing.T, file []byte, pageSize int) {
		fl := currentMeta(t, file, pageSize).freelist
		clear(file[int(fl)*pageSize : int(fl+1)*pageSize])
	})
	_, err := Open(path, statefile.Options{})
	if strings.Contains(err.Error(), "backup)") || strings.Contains(err.Error(), ".schema-") {
		t.Errorf("error %q names a backup, and there is none", err)
	}
	for _, v := range []int{1, 3, 2} {
		write(t, backupPath(path, v), []byte("an older state"))
	}
	// A link is not offered: restoring from it could copy any file.
	if err := os.Symlink("elsewhere", backupPath(path, 4)); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	_, err = Open(path, statefile.Options{})
	want := "genform copied the file to " + backupPath(path, 3) + " before it last upgraded its schema"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	wantCorrupt(t, err, path, "invalid freelist page", file)
}
