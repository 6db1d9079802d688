package plans

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// TestNames checks the names the JSON documents and the saved plan file
// spell actions, reasons and local changes with: each reads back as
// itself, no two are alike, and an unknown one is an error.
func TestNames(t *testing.T) {
	type named struct {
		name  string
		parse func(string) (any, error)
		value any
	}
	var all []named
	for _, act := range Actions {
		all = append(all, named{act.String(), func(s string) (any, error) { return ParseAction(s) }, act})
	}
	for i := range declaredConsts(t, "ReasonCode") {
		c := ReasonCode(i)
		all = append(all, named{c.String(), func(s string) (any, error) { return ParseReasonCode(s) }, c})
	}
	for i := range declaredConsts(t, "LocalWhat") {
		w := LocalWhat(i + 1)
		all = append(all, named{w.String(), func(s string) (any, error) { return ParseLocalWhat(s) }, w})
	}
	seen := map[string]any{}
	for _, n := range all {
		t.Run(n.name, func(t *testing.T) {
			got, err := n.parse(n.name)
			if err != nil || got != n.value {
				t.Errorf("parsing %q: %v, %v; want %v", n.name, got, err, n.value)
			}
			if prev, ok := seen[n.name]; ok && prev != n.value && n.name != "" {
				t.Errorf("%q names both %v and %v", n.name, prev, n.value)
			}
			seen[n.name] = n.value
		})
	}
	if len(Actions) != int(Delete)+1 {
		t.Errorf("Actions lists %d actions, want every one of the %d", len(Actions), int(Delete)+1)
	}
	for _, bad := range []string{"", "nope"} {
		if _, err := ParseLocalWhat(bad); err == nil {
			t.Errorf("ParseLocalWhat(%q) is not an error", bad)
		}
	}
	if _, err := ParseAction("nope"); err == nil {
		t.Error(`ParseAction("nope") is not an error`)
	}
	if _, err := ParseReasonCode("nope"); err == nil {
		t.Error(`ParseReasonCode("nope") is not an error`)
	}
	// A value past the names prints as what it is, never as "".
	for got, want := range map[string]string{
		Action(99).String():     "Action(99)",
		ReasonCode(99).String(): "ReasonCode(99)",
		LocalWhat(0).String():   "LocalWhat(0)",
		LocalWhat(99).String():  "LocalWhat(99)",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	// Every code has a name: the names are what the documents spell.
	if codes := declaredConsts(t, "ReasonCode"); len(codes) != len(reasonNames) || len(ReasonCodes()) != len(codes)-1 {
		t.Errorf("reason.go declares %d reason codes, names %d and lists %d: give every code a name", len(codes), len(reasonNames), len(ReasonCodes()))
	}
	if whats := declaredConsts(t, "LocalWhat"); len(LocalWhats()) != len(whats) {
		t.Errorf("reason.go declares %d kinds of local change and lists %d: give every kind a name", len(whats), len(LocalWhats()))
	}
}

// declaredConsts lists, in order, the names of the constants of typ that
// reason.go declares in one iota block: the value of the i-th is i plus
// the block's offset.
func declaredConsts(t *testing.T, typ string) []string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "reason.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, decl := range file.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST || len(gd.Specs) == 0 {
			continue
		}
		if first := gd.Specs[0].(*ast.ValueSpec); first.Type == nil || first.Type.(*ast.Ident).Name != typ {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			if len(vs.Values) > 0 && vs != gd.Specs[0] {
				t.Fatalf("the %s constants are no longer a plain iota block: this test cannot number them", typ)
			}
			for _, n := range vs.Names {
				names = append(names, n.Name)
			}
		}
	}
	if len(names) == 0 {
		t.Fatalf("reason.go declares no %s constants", typ)
	}
	return names
}
