package views

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
)

// The entries of one instance tell what differs between them, the prompt
// aside, and two source images given as data: URIs alike in their first
// bytes still read apart.
func TestHistoryDiffers(t *testing.T) {
	addr := addrs.MustParseInstance("video.v")
	uri := func(fill byte) string {
		return "data:image/png;base64," + base64.StdEncoding.EncodeToString(append(make([]byte, 200), fill))
	}
	entry := func(request string) *statefile.Resource {
		return &statefile.Resource{Addr: addr, Endpoint: addrs.Image2Video, Request: []byte(request)}
	}
	a := entry(`{"prompt":"move","source_image":"` + uri(1) + `","settings":{"gen_mode":"smooth"}}`)
	b := entry(`{"prompt":"move","source_image":"` + uri(2) + `","settings":{"gen_mode":"smooth"}}`)
	c := entry(`{"prompt":"still","source_image":"` + uri(2) + `","settings":{"gen_mode":"enhanced"}}`)

	if got := historyDiffers([]*statefile.Resource{a}); got != nil {
		t.Errorf("one entry differs in %v", got)
	}
	if got := historyDiffers([]*statefile.Resource{a, b}); !slices.Equal(got, []string{"source_image"}) {
		t.Errorf("entries that differ in their source image differ in %v", got)
	}
	if got := historyDiffers([]*statefile.Resource{b, c}); !slices.Equal(got, []string{"gen_mode"}) {
		t.Errorf("entries that differ in prompt and gen_mode differ in %v, want gen_mode (the prompt is always shown)", got)
	}
	va, vb := historyValue(uri(1)), historyValue(uri(2))
	if va == vb || len(va) > 120 || !strings.Contains(va, "bytes, sha256 ") {
		t.Errorf("two data URIs read %q and %q", va, vb)
	}
}
