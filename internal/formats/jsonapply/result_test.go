package jsonapply

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile/apply"
)

// TestUnstoredInTheResult: a file the store did not take is listed with
// its object and why; one of a generation in the history also names the
// generation, which push uploads from the cache.
func TestUnstoredInTheResult(t *testing.T) {
	down := errors.New("the store cannot be reached")
	res := &apply.Result{Unstored: []apply.Unstored{
		{Addr: addrs.MustParseInstance("image.keep"), Path: "generated/image/keep/0.png", Object: "s3://b/sha256/aa/aa", Err: down},
		{Addr: addrs.MustParseInstance("image.gone"), Path: "generated/image/gone/0.png", Generation: "g-1", Object: "s3://b/sha256/bb/bb", Err: down},
	}}
	var out bytes.Buffer
	if err := WriteResult(&out, res, nil); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Unstored []map[string]string `json:"unstored"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v in %s", err, out.String())
	}
	want := []map[string]string{
		{"address": "image.keep", "path": "generated/image/keep/0.png", "object": "s3://b/sha256/aa/aa", "message": "the store cannot be reached"},
		{"address": "image.gone", "path": "generated/image/gone/0.png", "generation_id": "g-1", "object": "s3://b/sha256/bb/bb", "message": "the store cannot be reached"},
	}
	if d := cmp.Diff(want, doc.Unstored); d != "" {
		t.Errorf("unstored (-want +got):\n%s", d)
	}
}
