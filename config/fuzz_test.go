package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestValidConfigurations loads testdata/valid, which holds every kind of
// block and meta-argument in both syntaxes, as one configuration.
func TestValidConfigurations(t *testing.T) {
	dir := filepath.Join("testdata", "valid")
	c, diags := loadTest(dir, Options{})
	if len(diags) > 0 {
		t.Fatal(diagList(diags))
	}
	insts := expandAll(t, c, nil)
	if len(insts) != 21 {
		t.Errorf("got %d instances, want 21", len(insts))
	}
	if got := insts[`image.shot["alt"]`].Attrs()["prompt"].AsString(); got != "A photo of a lighthouse (noir wide ), stormy" {
		t.Errorf("templated prompt = %q", got)
	}
	if got := insts["video.reel"].Attrs()["prompt"].AsString(); got != "a reel of 3 frames" {
		t.Errorf("reel prompt = %q", got)
	}
}

// FuzzLoad feeds arbitrary bytes to the decoder as a native-syntax or a
// JSON configuration. Whatever the input, Load must not panic, must return
// a Config, and must give every error a source range; what it accepts must
// expand into requests that are valid JSON.
func FuzzLoad(f *testing.F) {
	for _, sub := range []string{"invalid", "valid"} {
		entries, err := os.ReadDir(filepath.Join("testdata", sub))
		if err != nil {
			f.Fatal(err)
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), SuffixHCL) && !strings.HasSuffix(e.Name(), SuffixJSON) {
				continue
			}
			src, err := os.ReadFile(filepath.Join("testdata", sub, e.Name()))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src, strings.HasSuffix(e.Name(), SuffixJSON))
		}
	}
	dir := f.TempDir()
	for name, content := range map[string]string{
		"notes.txt":      "hello",
		"frames/end.png": "\x89PNG\r\n\x1a\n",
		"shots.csv":      "name,mood,seed\nhero,calm,1\n",
		"prompt.tmpl":    "${subject}",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte, isJSON bool) {
		if len(src) > 16<<10 {
			return
		}
		name, stale := "fuzz"+SuffixHCL, "fuzz"+SuffixJSON
		if isJSON {
			name, stale = stale, name
		}
		os.Remove(filepath.Join(dir, stale))
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			t.Fatal(err)
		}
		c, diags := loadTest(dir, Options{Vars: nil, Environ: []string{"GENFORM_VAR_x=1"}})
		if c == nil {
			t.Fatal("Load returned a nil *Config")
		}
		checkRanges(t, diags)
		if diags.HasErrors() {
			return
		}
		scope := Scope{}
		for _, r := range c.Resources {
			insts, diags := c.Expand(r, scope)
			checkRanges(t, diags)
			for _, in := range insts {
				if in.Request != nil && !json.Valid(in.Request) {
					t.Fatalf("%s: request is not JSON: %q", in.Addr, in.Request)
				}
				if filepath.IsAbs(in.Dir) || strings.HasPrefix(in.Dir, "..") {
					t.Fatalf("%s: dir %q leaves the working directory", in.Addr, in.Dir)
				}
			}
			if !diags.HasErrors() {
				scope[r.Addr()] = ResourceValue(r, insts, nil)
			}
		}
		_, diags = c.EvalOutputs(scope)
		checkRanges(t, diags)
	})
}

func checkRanges(t *testing.T, diags hcl.Diagnostics) {
	t.Helper()
	for _, d := range diags {
		if d.Severity == hcl.DiagError && d.Subject == nil {
			t.Fatalf("error without a range: %s: %s", d.Summary, d.Detail)
		}
	}
}
