package plans

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
)

// An output the provider answered as bytes, with no URL, is seen by the
// blocks that refer to it as its file's data: URI, while the file is what
// the record says; one with a URL is seen as its URL.
func TestRecordValueOfAnInlineOutput(t *testing.T) {
	root := t.TempDir()
	data := append([]byte("\x89PNG\r\n\x1a\n"), "pixels"...)
	path := "generated/image/a/0.png"
	abs := filepath.Join(root, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(abs, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(abs)
	sum := sha256.Sum256(data)
	rec := &statefile.Resource{
		Addr: addrs.MustParseInstance("image.a"), Status: StatusSucceed, Dir: "generated/image/a",
		Outputs: []statefile.Output{
			{Index: 0, Path: path, SHA256: hex.EncodeToString(sum[:]), Size: fi.Size(), ModTime: fi.ModTime(), ContentType: "image/png"},
			{Index: 1, MediaURL: "https://cdn.example/1.png", Path: "generated/image/a/1.png"},
		},
	}
	media := func() []string {
		var urls []string
		for it := RecordValue(root, rec, rec.Dir).GetAttr("outputs").ElementIterator(); it.Next(); {
			_, o := it.Element()
			urls = append(urls, o.GetAttr("media_url").AsString())
		}
		return urls
	}
	got := media()
	if want := "data:image/png;base64,iVBORw0KGgpwaXhlbHM="; got[0] != want {
		t.Errorf("the inline output's media_url is %q, want %q", got[0], want)
	}
	if got[1] != "https://cdn.example/1.png" {
		t.Errorf("the linked output's media_url is %q, want its URL", got[1])
	}

	// Changed on disk: it is not what was made, and is not passed on.
	if err := os.WriteFile(abs, append(data, '!'), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(abs, time.Now(), time.Now().Add(time.Minute))
	if got := media(); got[0] != "" {
		t.Errorf("a changed file was passed on as %q", got[0])
	}
}
