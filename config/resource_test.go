package config

import (
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// resourceContent reads a plain native-syntax body itself; what it returns
// is what Content returns, and anything Content would report goes through
// Content.
func TestResourceContentMatchesContent(t *testing.T) {
	for _, src := range []string{
		"image \"a\" {\n  prompt = \"p\"\n  seed = 3\n  lifecycle {\n    prevent_destroy = true\n  }\n  lifecycle {\n  }\n}\n",
		"image \"a\" {\n}\n",
		"image \"a\" {\n  promt = \"p\"\n}\n",
		"image \"a\" {\n  lifecycle \"x\" {\n  }\n}\n",
		"image \"a\" {\n  other {\n  }\n  for_each = x\n  depends_on = [image.b]\n}\n",
	} {
		f, diags := hclsyntax.ParseConfig([]byte(src), "f.gen.hcl", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		body := f.Body.(*hclsyntax.Body).Blocks[0].Body
		want, wantDiags := body.Content(resourceSchema)
		got, gotDiags := resourceContent(body)
		if d := cmp.Diff(want, got, sameAST...); d != "" {
			t.Errorf("content differs (-Content +resourceContent):\n%s\nsource:\n%s", d, src)
		}
		if d := cmp.Diff(wantDiags.Error(), gotDiags.Error()); d != "" {
			t.Errorf("diagnostics differ:\n%s", d)
		}
	}
}

// TestResourceSize guards the packing of Resource's small fields: a large
// configuration holds one Resource per block, and Go allocates 352 bytes
// for one of up to 352, 384 past that.
func TestResourceSize(t *testing.T) {
	if n := unsafe.Sizeof(Resource{}); n > 352 {
		t.Errorf("a Resource is %d bytes, more than 352: keep its one-byte fields side by side", n)
	}
}
