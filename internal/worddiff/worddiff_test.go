package worddiff

import "testing"

func TestDiff(t *testing.T) {
	br := func(s string) string { return s }
	for _, tc := range []struct{ a, b, want string }{
		{"a lighthouse at dusk", "a lighthouse at dawn", "a lighthouse at [-dusk-] {+dawn+}"},
		{"a red fox", "a red fox at night", "a red fox {+at night+}"},
		{"old words here", "", "[-old words here-]"},
		{"same", "same", "same"},
		{"  spaced   out ", "spaced out", "spaced out"},
	} {
		if got := Render(Diff(tc.a, tc.b), br, br); got != tc.want {
			t.Errorf("Diff(%q, %q) renders %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
	// Past the table's bound, one removal and one addition.
	long := make([]byte, 0, 8000)
	for range 2100 {
		long = append(long, "w "...)
	}
	if ops := Diff(string(long), string(long)+"x"); len(ops) != 2 || ops[0].Kind != '-' || ops[1].Kind != '+' {
		t.Errorf("a diff past the bound is %d pieces", len(ops))
	}
}
