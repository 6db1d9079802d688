package config

import (
	"fmt"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/dirtest"
)

func TestExpandInstances(t *testing.T) {
	const src = `
genform { output_dir = "media" }

variable "colors" {
  type    = map(string)
  default = { red = "crimson", blue = "navy" }
}

image "frame" {
  count  = 3
  prompt = "frame ${count.index}"
  seed   = count.index
}

image "color" {
  for_each = var.colors
  prompt   = "a ${each.value} (${each.key}) wall"
}

image "set" {
  for_each = toset(["b", "a"])
  prompt   = each.value
  dir      = "assets/${each.key}"
}

image "none" {
  count  = 0
  prompt = "never"
}
`
	c := mustLoad(t, src, Options{})
	got := map[string][]string{}
	for _, r := range c.Resources {
		insts, diags := c.Expand(r, Scope{})
		if diags.HasErrors() {
			t.Fatal(diagList(diags))
		}
		for _, in := range insts {
			got[r.Addr().String()] = append(got[r.Addr().String()], fmt.Sprintf("%s %s %s", in.Addr, in.Dir, in.Attrs()["prompt"].AsString()))
		}
	}
	want := map[string][]string{
		"image.frame": {
			"image.frame[0] media/image/frame/0 frame 0",
			"image.frame[1] media/image/frame/1 frame 1",
			"image.frame[2] media/image/frame/2 frame 2",
		},
		"image.color": {
			`image.color["blue"] media/image/color/blue a navy (blue) wall`,
			`image.color["red"] media/image/color/red a crimson (red) wall`,
		},
		"image.set": {
			`image.set["a"] assets/a a`,
			`image.set["b"] assets/b b`,
		},
	}
	for addr, w := range want {
		if strings.Join(got[addr], "\n") != strings.Join(w, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", addr, got[addr], w)
		}
	}
	if len(got["image.none"]) != 0 {
		t.Errorf("count = 0 gave instances: %q", got["image.none"])
	}
	insts, _ := c.Expand(c.Resource(res("image.frame")), Scope{})
	if seed := insts[2].Attrs()["seed"]; !seed.RawEquals(cty.NumberIntVal(2)) {
		t.Errorf("seed of frame[2] = %#v", seed)
	}
	if k := insts[1].Addr.Key.Value(); !k.RawEquals(cty.NumberIntVal(1)) {
		t.Errorf("key of frame[1] = %#v", k)
	}
}

// A video made from an image refers to it: unknown at first, then known
// once the scope has the image's value from state.
func TestExpandWithScope(t *testing.T) {
	const src = `
image "hero" {
  count  = 2
  prompt = "hero ${count.index}"
}

video "motion" {
  source_image = image.hero[1].outputs[0].media_url
  prompt       = "dolly, after ${image.hero[0].id}"
}

output "clip" { value = video.motion.outputs[0].path }
output "static" { value = "x" }
`
	c := mustLoad(t, src, Options{})
	if got := fmt.Sprint(c.Graph()[res("video.motion")]); got != "[image.hero]" {
		t.Errorf("video.motion depends on %s", got)
	}
	if c.Resources[0].Addr().String() != "image.hero" {
		t.Errorf("resources not in dependency order: first is %s", c.Resources[0].Addr())
	}
	video := c.Resource(res("video.motion"))

	// Nothing generated yet: the request is not known.
	insts, diags := c.Expand(video, Scope{})
	if diags.HasErrors() {
		t.Fatal(diagList(diags))
	}
	if insts[0].Request != nil {
		t.Errorf("request known before the image exists: %s", insts[0].Request)
	}
	if insts[0].Body().GetAttr("config").GetAttr("source_image").IsKnown() {
		t.Errorf("source_image known before the image exists")
	}

	// The images are in state.
	hero := c.Resource(res("image.hero"))
	heroInsts, _ := c.Expand(hero, Scope{})
	values := map[addrs.Instance]cty.Value{
		inst("image.hero[0]"): InstanceValue("c0", "g0", "succeed", []OutputValue{{ID: "o", MediaURL: "https://cdn/0.png", Path: "generated/image/hero/0/0.png"}}),
		inst("image.hero[1]"): InstanceValue("c1", "g1", "succeed", []OutputValue{{ID: "o", MediaURL: "https://cdn/1.png", Path: "generated/image/hero/1/0.png"}}),
	}
	scope := Scope{res("image.hero"): ResourceValue(hero, heroInsts, values)}
	insts, diags = c.Expand(video, scope)
	if diags.HasErrors() {
		t.Fatal(diagList(diags))
	}
	want := `{"config":{"source_image":"https://cdn/1.png"},"gen_mode":"smooth","is_enable_prompt_enhancer":true,"is_public":false,"prompt":"dolly, after c0"}`
	if string(insts[0].Request) != want {
		t.Errorf("request = %s\nwant %s", insts[0].Request, want)
	}

	// Outputs: unknown until the video exists, then known.
	outs, diags := c.EvalOutputs(scope)
	if diags.HasErrors() {
		t.Fatal(diagList(diags))
	}
	if outs["clip"].IsKnown() || outs["static"].AsString() != "x" {
		t.Errorf("outputs = %#v", outs)
	}
	scope[res("video.motion")] = ResourceValue(video, insts, map[addrs.Instance]cty.Value{
		inst("video.motion"): InstanceValue("v", "gv", "succeed", []OutputValue{{Path: "generated/video/motion/0.mp4"}}),
	})
	outs, _ = c.EvalOutputs(scope)
	if outs["clip"].AsString() != "generated/video/motion/0.mp4" {
		t.Errorf("clip = %#v", outs["clip"])
	}
}

func TestExpandUnknownCount(t *testing.T) {
	const src = `
image "a" { prompt = "a" }

image "b" {
  count  = length(image.a.outputs)
  prompt = "b ${count.index}"
}
`
	c := mustLoad(t, src, Options{}) // Load cannot know the count yet; that is not an error
	b := c.Resource(res("image.b"))
	_, diags := c.Expand(b, Scope{})
	if !diags.HasErrors() || diags[0].Summary != "Invalid count argument" || !strings.Contains(diags[0].Detail, "cannot be determined until apply") {
		t.Errorf("want Invalid count argument; got:\n%s", diagList(diags))
	}
	a := c.Resource(res("image.a"))
	aInsts, _ := c.Expand(a, Scope{})
	scope := Scope{res("image.a"): ResourceValue(a, aInsts, map[addrs.Instance]cty.Value{
		inst("image.a"): InstanceValue("c", "g", "succeed", []OutputValue{{}, {}}),
	})}
	insts, diags := c.Expand(b, scope)
	if diags.HasErrors() || len(insts) != 2 {
		t.Errorf("with image.a known: %d instances, %s", len(insts), diagList(diags))
	}
}

func TestRefsThroughLocalsAndDependsOn(t *testing.T) {
	const src = `
locals {
  hero_url = image.hero.outputs[0].media_url
  url      = local.hero_url
  brand    = "ACME"
}

image "hero" { prompt = "hero" }
image "logo" { prompt = local.brand }

video "a" {
  source_image = local.url
}

video "b" {
  prompt     = "b"
  depends_on = [video.a, image.logo]
}
`
	c := mustLoad(t, src, Options{})
	g := c.Graph()
	for addr, want := range map[string]string{
		"image.hero": "[]", "image.logo": "[]", "video.a": "[image.hero]", "video.b": "[image.logo video.a]",
	} {
		if got := fmt.Sprint(g[res(addr)]); got != want {
			t.Errorf("Refs of %s = %s, want %s", addr, got, want)
		}
	}
	var order []string
	for _, r := range c.Resources {
		order = append(order, r.Addr().String())
	}
	if got := strings.Join(order, " "); got != "image.hero image.logo video.a video.b" {
		t.Errorf("order = %s", got)
	}
	if got := c.Resource(res("video.b")).DependsOn; fmt.Sprint(got) != "[video.a image.logo]" {
		t.Errorf("DependsOn = %v", got)
	}
	// The local that reads a resource is evaluated in the scope given.
	hero := c.Resource(res("image.hero"))
	hi, _ := c.Expand(hero, Scope{})
	scope := Scope{res("image.hero"): ResourceValue(hero, hi, map[addrs.Instance]cty.Value{
		inst("image.hero"): InstanceValue("c", "g", "succeed", []OutputValue{{MediaURL: "https://cdn/h.png"}}),
	})}
	insts, diags := c.Expand(c.Resource(res("video.a")), scope)
	if diags.HasErrors() {
		t.Fatal(diagList(diags))
	}
	if got := insts[0].Attrs()["source_image"]; !got.RawEquals(cty.StringVal("https://cdn/h.png")) {
		t.Errorf("source_image through locals = %#v", got)
	}
}

func TestDeclarationOrderBreaksTies(t *testing.T) {
	dir := dirtest.New(t, map[string]string{
		"b.gen.hcl": `image "z" { prompt = "z" }` + "\n" + `image "y" { prompt = "y" }`,
		"a.gen.hcl": `image "x" { prompt = image.y.id }` + "\n" + `image "w" { prompt = "w" }`,
	})
	c, diags := loadTest(dir, Options{})
	if diags.HasErrors() {
		t.Fatal(diagList(diags))
	}
	var order []string
	for _, r := range c.Resources {
		order = append(order, r.Addr().String())
	}
	// a.gen.hcl first (lexical order): x waits for y; w, z and y are ready
	// at once and keep their declaration order.
	if got := strings.Join(order, " "); got != "image.w image.z image.y image.x" {
		t.Errorf("order = %s", got)
	}
}

func TestSettingsAndDefaults(t *testing.T) {
	c := mustLoad(t, `image "a" { prompt = "a" }`, Options{})
	if c.Settings.StateFile != DefaultStateFile || c.Settings.OutputDir != DefaultOutputDir {
		t.Errorf("settings = %+v", c.Settings)
	}
	s := c.Service
	if s.BaseURL != "" || s.Token != "" || s.Parallelism != 10 || s.RequestsPerMinute != 450 || s.PollInterval != 5*time.Second || s.Timeout != 30*time.Minute || s.MaxDownloadSize != 0 {
		t.Errorf("service defaults = %+v", s)
	}
	c = mustLoad(t, `
variable "rpm" { default = 100 }
locals { dir = "state" }
genform {
  state_file = "${local.dir}/s.db"
  output_dir = "./out/"
}
service {
  base_url            = "https://gen.example.com/"
  token               = env("GF_TOKEN")
  parallelism         = 4
  requests_per_minute = var.rpm
  poll_interval       = "250ms"
  timeout             = "1h"
  max_download_size   = "2GiB"
}
`, Options{Environ: []string{"GF_TOKEN=t0k"}})
	if c.Settings.StateFile != filepath.Join("state", "s.db") || c.Settings.OutputDir != "out" {
		t.Errorf("settings = %+v", c.Settings)
	}
	s = c.Service
	if s.BaseURL != "https://gen.example.com" || s.Token != "t0k" || s.Parallelism != 4 || s.RequestsPerMinute != 100 || s.PollInterval != 250*time.Millisecond || s.Timeout != time.Hour || s.MaxDownloadSize != 2<<30 {
		t.Errorf("service = %+v", s)
	}
}

func TestJSONSyntax(t *testing.T) {
	dir := dirtest.New(t, map[string]string{
		"main.gen.json": `{
  "variable": { "style": { "type": "string", "default": "noir" } },
  "image": {
    "hero": {
      "count": 2,
      "prompt": "hero ${count.index}, ${var.style}",
      "lifecycle": { "prevent_destroy": true, "ignore_changes": ["seed"] }
    }
  },
  "video": {
    "clip": {
      "source_image": "${image.hero[0].outputs[0].media_url}",
      "depends_on": ["image.hero"]
    }
  },
  "output": { "first": { "value": "${image.hero[0].id}" } }
}`,
	})
	c, diags := loadTest(dir, Options{})
	if diags.HasErrors() {
		t.Fatal(diagList(diags))
	}
	hero := c.Resource(res("image.hero"))
	if !hero.PreventDestroy || fmt.Sprint(hero.IgnoreChanges) != "[seed]" {
		t.Errorf("lifecycle = %v %v", hero.PreventDestroy, hero.IgnoreChanges)
	}
	insts := expandAll(t, c, nil)
	if got := insts["image.hero[1]"].Attrs()["prompt"]; !got.RawEquals(cty.StringVal("hero 1, noir")) {
		t.Errorf("prompt = %#v", got)
	}
	if insts["video.clip"].Endpoint != addrs.Image2Video || fmt.Sprint(c.Graph()[res("video.clip")]) != "[image.hero]" {
		t.Errorf("clip: %s %v", insts["video.clip"].Endpoint, c.Graph()[res("video.clip")])
	}
}

func TestNoConfigurationFiles(t *testing.T) {
	c, diags := loadTest(t.TempDir(), Options{})
	if c == nil || !diags.HasErrors() || diags[0].Summary != "No configuration files" {
		t.Errorf("got %v, %s", c, diagList(diags))
	}
}

func TestLoadReportsEverythingTogether(t *testing.T) {
	diags := loadErrors(t, `
image "a" {
  prompt       = "a"
  image_number = 9
}
image "b" {
  prompt     = "b"
  resolution = 1
}
video "c" { gen_mode = "x" }
`, Options{})
	var summaries []string
	for _, d := range diags {
		summaries = append(summaries, d.Summary)
	}
	want := "Invalid image_number, Invalid resolution, Missing required argument, Invalid gen_mode"
	if got := strings.Join(summaries, ", "); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// An error inside a resource with many instances is reported once.
func TestDiagnosticsNotRepeatedPerInstance(t *testing.T) {
	diags := loadErrors(t, `
image "a" {
  count        = 50
  prompt       = "a"
  image_number = 9
}
`, Options{})
	if len(diags) != 1 {
		t.Errorf("got %d diagnostics:\n%s", len(diags), diagList(diags))
	}
}

// The apply engine expands resources from several goroutines; run under
// -race this shows Expand shares nothing mutable.
func TestExpandConcurrently(t *testing.T) {
	c := mustLoad(t, `
locals { url = image.a[0].outputs[0].media_url }
image "a" {
  count  = 4
  prompt = "a ${count.index}"
}
video "v" {
  for_each     = toset(["x", "y"])
  source_image = local.url
  prompt       = each.key
}
`, Options{})
	done := make(chan string)
	for i := 0; i < 8; i++ {
		go func() {
			var out strings.Builder
			for _, r := range c.Resources {
				insts, diags := c.Expand(r, Scope{})
				if diags.HasErrors() {
					out.WriteString(diagList(diags))
				}
				for _, in := range insts {
					out.WriteString(in.Addr.String() + " ")
				}
			}
			c.EvalOutputs(Scope{})
			done <- out.String()
		}()
	}
	first := <-done
	for i := 1; i < 8; i++ {
		if got := <-done; got != first {
			t.Errorf("goroutines disagree:\n%s\n%s", got, first)
		}
	}
	if !strings.Contains(first, `video.v["y"]`) || !strings.Contains(first, "image.a[3]") {
		t.Errorf("instances: %s", first)
	}
}

// The instances of a resource that refers to nothing are computed by Load
// and assembled by Expand; they are the instances a resource that refers
// to another would get once that one is known, and each Expand gives
// instances of its own.
func TestExpandFromLoadMatchesEvaluation(t *testing.T) {
	c := mustLoad(t, `
image "base" {
  prompt = "base"
}
image "a" {
  for_each     = toset(["x", "y"])
  prompt       = "p ${each.key}"
  seed         = 3
  aspect_ratio = "1:1"
}
image "b" {
  for_each     = toset(["x", "y"])
  prompt       = "p ${each.key}${substr(image.base.id, 0, 0)}"
  seed         = 3
  aspect_ratio = "1:1"
}
video "va" {
  source_images = ["https://e/a.png", "https://e/b.png"]
  frame_indices = [0, 9]
  input_width   = 640
  input_height  = 360
  watermark_free = true
}
video "vb" {
  source_images = ["https://e/a.png", "https://e/b.png${substr(image.base.id, 0, 0)}"]
  frame_indices = [0, 9]
  input_width   = 640
  input_height  = 360
  watermark_free = true
}
`, Options{})
	scope := Scope{res("image.base"): InstanceValue("c1", "g1", "succeed", nil)}
	for _, pair := range [][2]string{{"image.a", "image.b"}, {"video.va", "video.vb"}} {
		a, diags := c.Expand(c.Resource(res(pair[0])), scope)
		if diags.HasErrors() {
			t.Fatal(diagList(diags))
		}
		b, diags := c.Expand(c.Resource(res(pair[1])), scope)
		if diags.HasErrors() {
			t.Fatal(diagList(diags))
		}
		if len(a) != len(b) || len(a) == 0 {
			t.Fatalf("%d and %d instances", len(a), len(b))
		}
		for i := range a {
			x, y := a[i], b[i]
			if !x.Body().RawEquals(y.Body()) || string(x.Request) != string(y.Request) || x.Endpoint != y.Endpoint ||
				x.WatermarkFree != y.WatermarkFree || x.Addr.Key != y.Addr.Key || len(x.Attrs()) != len(y.Attrs()) {
				t.Errorf("%s differs from %s:\n%#v\n%#v", x.Addr, y.Addr, x, y)
			}
			for name, v := range x.Attrs() {
				if !v.RawEquals(y.Attrs()[name]) {
					t.Errorf("%s: %s = %#v, %s has %#v", x.Addr, name, v, y.Addr, y.Attrs()[name])
				}
			}
		}
	}

	r := c.Resource(res("image.a"))
	first, _ := c.Expand(r, Scope{})
	first[0].Attrs()["prompt"] = cty.StringVal("changed")
	first[0].Dir = "elsewhere"
	again, _ := c.Expand(r, Scope{})
	if again[0].Attrs()["prompt"].AsString() != "p x" || again[0].Dir != filepath.Join("generated", "image", "a", "x") {
		t.Errorf("a change to one Expand's instance shows in the next: %#v", again[0])
	}
}

// Only resources whose values an expression reads need one in a Scope.
func TestReferenced(t *testing.T) {
	c := mustLoad(t, `
locals { c_url = image.c.outputs[0].media_url }
image "a" { prompt = "a" }
video "b" { source_image = image.a.outputs[0].media_url }
image "c" { prompt = "c" }
video "d" { source_image = local.c_url }
image "e" { prompt = "e" }
output "e" { value = image.e.id }
image "f" { prompt = "f" }
image "g" {
  prompt     = "g"
  depends_on = [image.f]
}
`, Options{})
	want := map[string]bool{
		"image.a": true, "video.b": false, "image.c": true, "video.d": false,
		"image.e": true, "image.f": false, "image.g": false, "image.missing": false,
	}
	for addr, w := range want {
		if got := c.Referenced(res(addr)); got != w {
			t.Errorf("Referenced(%s) = %v, want %v", addr, got, w)
		}
	}
}

// Instances share equal config and settings objects; each Body is still
// its own request, however many distinct values there are.
func TestBodiesOfManyInstances(t *testing.T) {
	c := mustLoad(t, `
image "seeds" {
  count        = 150
  prompt       = "p"
  seed         = count.index % 100
  image_number = count.index % 2 + 1
}
video "durations" {
  for_each = { a = 2, b = 4.0, c = 2, d = 8 }
  prompt   = each.key
  duration = each.value
}
image "i" {
  prompt     = "same settings values, other names"
  resolution = 720
  seed       = 4
}
video "v" {
  prompt   = "v"
  duration = 4
  aspect_ratio = "16:9"
  seed = 720
}
`, Options{})
	for _, r := range c.Resources {
		insts, diags := c.Expand(r, Scope{})
		if diags.HasErrors() {
			t.Fatal(diagList(diags))
		}
		for _, in := range insts {
			body, err := JSON(in.Body())
			if err != nil || string(body) != string(in.Request) {
				t.Errorf("%s: Body %s, %v; Request %s", in.Addr, body, err, in.Request)
			}
			for _, name := range []string{"seed", "image_number", "duration", "resolution", "aspect_ratio"} {
				v, ok := in.Attrs()[name]
				if !ok {
					continue
				}
				group := "settings"
				if name == "image_number" {
					group = "config"
				}
				if got := in.Body().GetAttr(group).GetAttr(name); !got.RawEquals(v) {
					t.Errorf("%s: Body's %s = %#v, Attrs has %#v", in.Addr, name, got, v)
				}
			}
		}
	}
}

// The key that finds an equal config or settings object tells apart the
// same value in other fields, and gives up on numbers its text may not
// tell apart: the service's rules refuse a fraction in every field a
// request sends, but the key does not count on it.
func TestGroupKey(t *testing.T) {
	key := func(id attrID, v cty.Value) (string, bool) {
		var vals [numAttrs]cty.Value
		vals[id] = v
		k, ok := appendGroupKey(nil, []jsonField{{name: attrNames[id], id: id}}, &vals)
		return string(k), ok
	}
	res, ok1 := key(aResolution, cty.NumberIntVal(720))
	dur, ok2 := key(aDuration, cty.NumberIntVal(720))
	if !ok1 || !ok2 || res == dur {
		t.Errorf("720 as resolution and as duration: keys %q (%v) and %q (%v)", res, ok1, dur, ok2)
	}
	for _, text := range []string{"0.1", "0.10000000000000000001"} {
		f, _, err := big.ParseFloat(text, 10, 512, big.ToNearestEven)
		if err != nil {
			t.Fatal(err)
		}
		if k, ok := key(aSeed, cty.NumberVal(f)); ok {
			t.Errorf("seed %s has the key %q", text, k)
		}
	}
}

// for_each = toset(LIST) of known strings is read without building the set
// (tosetStrings); the instances are those of the set, and anything the
// shortcut does not take is evaluated as written, with the same errors.
func TestToSetShortcutMatchesTheSet(t *testing.T) {
	for _, list := range []string{
		`["b", "a", "c", "a"]`,
		`[]`,
		`["é", "e\u0301", "z", "Z"]`,
		`tolist(["x", "y", "x"])`,
		`[1, "a"]`,
		`["a", null]`,
		`[for i in range(300) : "k${i % 250}"]`,
		`var.keys`,
	} {
		t.Run(list, func(t *testing.T) {
			vars := "variable \"keys\" {\n  default = [\"q\", \"p\"]\n}\n"
			shortcut := vars + "image \"tile\" {\n  for_each = toset(" + list + ")\n  prompt   = \"tile ${each.key} ${each.value}\"\n}\n"
			// The same set, by a way the shortcut does not take.
			set := vars + "locals {\n  s = toset(" + list + ")\n}\nimage \"tile\" {\n  for_each = local.s\n  prompt   = \"tile ${each.key} ${each.value}\"\n}\n"
			got, gotDiags := loadAndExpand(t, shortcut)
			want, wantDiags := loadAndExpand(t, set)
			if gotDiags != wantDiags {
				t.Fatalf("diagnostics %q, want %q", gotDiags, wantDiags)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("instances differ (-set +toset shortcut):\n%s", d)
			}
		})
	}
	ctx := &hcl.EvalContext{Functions: map[string]function.Function{"toset": stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType))}}
	expr, _ := hclsyntax.ParseExpression([]byte(`toset(["b", "a", "b"])`), "x", hcl.InitialPos)
	if keys, ok := tosetStrings(expr, ctx); !ok || fmt.Sprint(keys) != "[a b]" {
		t.Errorf("tosetStrings = %v, %v; want [a b], true", keys, ok)
	}
}

// loadAndExpand loads src and returns each instance's address and prompt,
// or the summaries of the errors.
func loadAndExpand(t *testing.T, src string) (map[string]string, string) {
	t.Helper()
	c, diags := loadTest(dirtest.New(t, map[string]string{"main.gen.hcl": src}), Options{})
	if diags.HasErrors() {
		var s []string
		for _, d := range diags {
			s = append(s, d.Summary+": "+d.Detail)
		}
		return nil, strings.Join(s, "\n")
	}
	out := map[string]string{}
	for _, r := range c.Resources {
		insts, d := c.Expand(r, Scope{})
		if d.HasErrors() {
			t.Fatal(d)
		}
		for _, inst := range insts {
			out[inst.Addr.String()] = inst.Attrs()["prompt"].AsString()
		}
	}
	return out, ""
}

// A large count is evaluated on every core; its instances and their
// diagnostics still come in index order.
func TestManyInstancesInOrder(t *testing.T) {
	src := "image \"frame\" {\n  count        = 900\n  prompt       = \"frame ${count.index}\"\n  image_number = count.index % 300 == 7 ? 5 + floor(count.index / 300) : 1\n}\n"
	diags := loadErrors(t, src, Options{})
	var got []string
	for _, d := range diags {
		got = append(got, d.Detail)
	}
	if len(got) != 3 {
		t.Fatalf("%d diagnostics, want 3:\n%s", len(got), diagList(diags))
	}
	for i, want := range []string{"Got 5.", "Got 6.", "Got 7."} { // frame[7], [307], [607]
		if !strings.Contains(got[i], want) {
			t.Errorf("diagnostic %d is %q, want the one that says %s", i, got[i], want)
		}
	}
	c := mustLoad(t, strings.Replace(src, "count.index % 300 == 7 ? 5 + floor(count.index / 300) : 1", "1", 1), Options{})
	insts, d := c.Expand(c.Resources[0], Scope{})
	if d.HasErrors() || len(insts) != 900 {
		t.Fatalf("%d instances, %v", len(insts), d)
	}
	for i, inst := range insts {
		if want := fmt.Sprintf("image.frame[%d]", i); inst.Addr.String() != want || inst.Attrs()["prompt"].AsString() != fmt.Sprintf("frame %d", i) {
			t.Fatalf("instance %d is %s with prompt %#v", i, inst.Addr, inst.Attrs()["prompt"])
		}
	}
}
