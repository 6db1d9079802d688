package addrs

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/hashicorp/hcl/v2/hclsyntax"
)

func TestParsePrint(t *testing.T) {
	hero := Resource{Kind: Image, Name: "hero"}
	tests := []struct {
		in    string
		want  Instance
		canon string // "" when in is canonical
	}{
		{in: "image.hero", want: hero.Instance(NoKey)},
		{in: "video.intro_2-b", want: Resource{Kind: Video, Name: "intro_2-b"}.Instance(NoKey)},
		{in: "image.hero[0]", want: hero.Instance(IntKey(0))},
		{in: "image.hero[12]", want: hero.Instance(IntKey(12))},
		{in: `image.hero["red"]`, want: hero.Instance(StringKey("red"))},
		{in: `image.hero["a \"b\" c"]`, want: hero.Instance(StringKey(`a "b" c`))},
		{in: `image.hero["ünï"]`, want: hero.Instance(StringKey("ünï"))},
		{in: `image.hero[""]`, want: hero.Instance(StringKey(""))},
		// Not canonical, but what a user may type: HCL reads it.
		{in: "image.hero[007]", want: hero.Instance(IntKey(7)), canon: "image.hero[7]"},
		{in: "image.hero[ 3 ]", want: hero.Instance(IntKey(3)), canon: "image.hero[3]"},
		{in: `image.hero[ "x" ]`, want: hero.Instance(StringKey("x")), canon: `image.hero["x"]`},
		{in: "module.brand.image.hero", want: Resource{Module: MakeModule("module.brand"), Kind: Image, Name: "hero"}.Instance(NoKey)},
		{in: `module.brand["a"].image.hero[2]`, want: Resource{Module: MakeModule(`module.brand["a"]`), Kind: Image, Name: "hero"}.Instance(IntKey(2))},
		{in: `module.a[0].module.b.video.v["x"]`, want: Resource{Module: MakeModule(`module.a[0].module.b`), Kind: Video, Name: "v"}.Instance(StringKey("x"))},
		{in: `module.brand[ "a" ].image.hero`, want: Resource{Module: MakeModule(`module.brand["a"]`), Kind: Image, Name: "hero"}.Instance(NoKey), canon: `module.brand["a"].image.hero`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseInstance(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("ParseInstance(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
			canon := tt.canon
			if canon == "" {
				canon = tt.in
			}
			if s := got.String(); s != canon {
				t.Fatalf("String() = %q, want %q", s, canon)
			}
			again, err := ParseInstance(got.String())
			if err != nil || again != got {
				t.Fatalf("round trip of %q: %v, %v", got.String(), again, err)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ in, why string }{
		{"module.brand", "name one"},
		{"module", "module name is missing"},
		{"module.brand[true].image.x", "Index value required"},
		{"", "empty"},
		{"image", "wrong number of parts"},
		{"data.hero", `not "data"`},
		{"image.hero.x", "only an instance key"},
		{"image.hero[-1]", "Index value required"},
		{"image.hero[1.5]", "whole number"},
		{"image.hero[true]", ""},
		{"image.hero[0][1]", "wrong number of parts"},
		{"image.[0]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseInstance(tt.in)
			if err == nil {
				t.Fatalf("ParseInstance(%q) succeeded", tt.in)
			}
			if !strings.Contains(err.Error(), tt.why) || !strings.Contains(err.Error(), "write image.NAME or video.NAME") {
				t.Fatalf("error %q does not say %q and what to write", err, tt.why)
			}
		})
	}
}

func TestOrder(t *testing.T) {
	in := []string{`video.a`, `image.b["x"]`, `image.b[10]`, `image.b[2]`, `image.a`, `image.b["a"]`, `image.a-b`, `image.b`}
	want := []string{`image.a`, `image.a-b`, `image.b`, `image.b[2]`, `image.b[10]`, `image.b["a"]`, `image.b["x"]`, `video.a`}
	var list []Instance
	for _, s := range in {
		a, err := ParseInstance(s)
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, a)
	}
	Sort(list)
	var got []string
	for _, a := range list {
		got = append(got, a.String())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("sorted %v, want %v", got, want)
	}
}

// TestShellQuote pastes each quoted address into a real shell and checks
// that the shell hands back the address itself.
func TestShellQuote(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, s := range []string{`image.hero`, `image.hero[0]`, `image.hero["red"]`, `image.hero["it's $HOME; rm -rf *"]`, `video.x["a b"]`} {
		a, err := ParseInstance(s)
		if err != nil {
			t.Fatal(err)
		}
		q := a.Shell()
		if a.Key.IsZero() && q != s {
			t.Errorf("%s quoted as %s: a plain address needs no quotes", s, q)
		}
		out, err := exec.Command(sh, "-c", "printf %s "+q).Output()
		if err != nil {
			t.Fatalf("sh -c printf %s: %v", q, err)
		}
		if string(out) != a.String() {
			t.Errorf("the shell read %s as %q, want %q", q, out, a.String())
		}
	}
}

func TestEndpoints(t *testing.T) {
	for _, e := range Endpoints {
		got, ok := EndpointOf(e.Path())
		if !ok || got != e {
			t.Errorf("EndpointOf(%q) = %v, %v", e.Path(), got, ok)
		}
		if e.Kind() == 0 || e.Title() == "" {
			t.Errorf("%v has no kind or title", e)
		}
	}
	if _, ok := EndpointOf("/v1/jobs/nope"); ok {
		t.Error("an unknown path is an endpoint")
	}
}

func FuzzParseInstance(f *testing.F) {
	for _, s := range []string{`image.a`, `video.b[3]`, `image.c["x y"]`, `image.d[007]`, `x.y`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseInstance(s)
		if err != nil {
			return
		}
		b, err := ParseInstance(a.String())
		if err != nil || a != b {
			t.Fatalf("%q parsed as %#v, which prints %q and parses back as %#v, %v", s, a, a.String(), b, err)
		}
		if c, ok := ParseCanonical(a.String()); !ok || c != a {
			t.Fatalf("%q prints %q, which ParseCanonical reads as %#v, %v", s, a.String(), c, ok)
		}
		if c, ok := ParseCanonical(s); ok && c.String() != s {
			t.Fatalf("ParseCanonical(%q) = %#v, which prints %q", s, c, c.String())
		}
	})
}

// TestParseCanonical reads only what String prints.
func TestParseCanonical(t *testing.T) {
	for s, want := range map[string]bool{
		`image.hero`: true, `image.hero[12]`: true, `image.hero["a b"]`: true, `video.v["\u00e9"]`: false, `video.v["é"]`: true,
		`image.hero[007]`: false, `image.hero[+1]`: false, `image.hero[-0]`: false, `image.hero["\x41"]`: false,
		`image.hero[ 1 ]`: false, `image.hero[1.0]`: false, `data.x`: false, `image.`: false,
		`module.b.image.hero`: true, `module.b["k"].image.hero[1]`: true, `module.b[1].module.c.video.v`: true,
		`module.b`: false, `module.b.`: false, `module..image.x`: false, `module.b[01].image.x`: false, `module.b[1]image.x`: false,
		`module.b.module.image.x`: false, `module.b["k].image.x`: false,
	} {
		a, ok := ParseCanonical(s)
		if ok != want {
			t.Errorf("ParseCanonical(%s) = %v, want %v", s, ok, want)
		}
		if ok && a.String() != s {
			t.Errorf("ParseCanonical(%s) reads %s", s, a)
		}
	}
}

// TestValidName agrees with HCL's own identifier check.
func TestValidName(t *testing.T) {
	for _, s := range []string{"a", "hero", "_x", "a-b", "a_1", "1a", "-a", "a b", "", "é", "a.b", "aé", "x$", "ÿ1"} {
		if got, want := validName(s), hclsyntax.ValidIdentifier(s); got != want {
			t.Errorf("validName(%q) = %v, hclsyntax says %v", s, got, want)
		}
	}
}

// TestInstanceSize guards the size the Key's int32 index and the interned
// module buy: a large plan and state hold several maps keyed by addresses.
func TestInstanceSize(t *testing.T) {
	if n := unsafe.Sizeof(Instance{}); n > 56 {
		t.Errorf("an Instance is %d bytes, more than 56", n)
	}
}

func TestModule(t *testing.T) {
	brand := RootModule.Child("brand", NoKey)
	a := RootModule.Child("brand", StringKey("a"))
	inner := a.Child("logo", IntKey(1))
	if brand.String() != "module.brand" || a.String() != `module.brand["a"]` || inner.String() != `module.brand["a"].module.logo[1]` {
		t.Fatalf("Child: %s %s %s", brand, a, inner)
	}
	if a != MakeModule(`module.brand["a"]`) {
		t.Fatal("two makes of one address differ")
	}
	for _, tt := range []struct {
		m, o Module
		want bool
	}{
		{RootModule, a, true}, {brand, a, true}, {brand, inner, true}, {a, inner, true}, {a, brand, false},
		{inner, a, false}, {MakeModule("module.b"), MakeModule("module.brand"), false}, {a, MakeModule(`module.brand["ab"]`), false},
	} {
		if got := tt.m.Contains(tt.o); got != tt.want {
			t.Errorf("%q.Contains(%q) = %v, want %v", tt.m, tt.o, got, tt.want)
		}
	}
	if got := inner.Rebase(brand, MakeModule("module.style")); got.String() != `module.style["a"].module.logo[1]` {
		t.Errorf("Rebase: %s", got)
	}
	if got := inner.Rebase(a, RootModule); got.String() != `module.logo[1]` {
		t.Errorf("Rebase to the root: %s", got)
	}
	if m, err := ParseModule(`module.brand[ "a" ]`); err != nil || m != a {
		t.Errorf("ParseModule: %v, %v", m, err)
	}
	for _, bad := range []string{"image.x", "module.a.image.x", "module"} {
		if _, err := ParseModule(bad); err == nil {
			t.Errorf("ParseModule(%q) accepted", bad)
		}
	}
}
