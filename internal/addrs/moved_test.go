package addrs

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

func moveEndpoint(t *testing.T, s string) MoveEndpoint {
	t.Helper()
	tr, diags := hclsyntax.ParseTraversalAbs([]byte(s), "", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e, err := ParseMoveEndpoint(tr)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestMoveEndpoints reads moved blocks' addresses, pairs them as Terraform
// does, and moves instances with them.
func TestMoveEndpoints(t *testing.T) {
	tests := []struct {
		from, to string
		in, want string // an instance from matches, and where it goes
	}{
		{"image.a", "image.b", `image.a["x"]`, `image.b["x"]`},
		{"image.a", "image.b", "image.a[3]", "image.b[3]"},
		{"image.a[0]", `image.a["front"]`, "image.a[0]", `image.a["front"]`},
		{"image.a", "image.a[0]", "image.a", "image.a[0]"},
		{"video.v[2]", "video.w", "video.v[2]", "video.w"},
	}
	for _, tt := range tests {
		from, to := UnifyMoveEndpoints(moveEndpoint(t, tt.from), moveEndpoint(t, tt.to))
		in := MustParseInstance(tt.in)
		if !from.Matches(in) {
			t.Errorf("%s does not match %s", from, in)
			continue
		}
		if got := MoveOf(in, from, to); got.String() != tt.want {
			t.Errorf("moving %s from %s to %s: %s, want %s", in, tt.from, tt.to, got, tt.want)
		}
	}
	whole, one := moveEndpoint(t, "image.a"), moveEndpoint(t, "image.a[1]")
	if !whole.Overlaps(one) || !one.Overlaps(whole) || one.Overlaps(moveEndpoint(t, "image.a[2]")) || whole.Overlaps(moveEndpoint(t, "video.a")) {
		t.Error("Overlaps is wrong")
	}
	if whole.Matches(MustParseInstance("image.ab")) || one.Matches(MustParseInstance("image.a[2]")) {
		t.Error("Matches is wrong")
	}
	for _, bad := range []string{"image.a.prompt", "data.a", "image", `image.a[true]`} {
		tr, diags := hclsyntax.ParseTraversalAbs([]byte(bad), "", hcl.InitialPos)
		if diags.HasErrors() {
			continue
		}
		if _, err := ParseMoveEndpoint(tr); err == nil || !strings.Contains(err.Error(), "write image.NAME") {
			t.Errorf("ParseMoveEndpoint(%s) = %v, want an error saying what to write", bad, err)
		}
	}
}
