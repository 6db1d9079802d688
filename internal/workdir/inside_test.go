package workdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckInside(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(root, "real", "sub"), 0o755)
	os.Symlink(outside, filepath.Join(root, "out"))
	os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "in"))
	for rel, ok := range map[string]bool{
		"real/sub":         true,
		"in/sub":           true, // a link that stays inside is fine
		"not/yet/made":     true,
		"out":              false,
		"out/images/hero":  false,
		"real/../out/deep": false,
	} {
		err := CheckInside(root, rel)
		if (err == nil) != ok {
			t.Errorf("%s: %v", rel, err)
		}
		if err != nil && !strings.Contains(err.Error(), "outside the working directory") {
			t.Errorf("%s: unclear error %v", rel, err)
		}
	}
}
