package config

import (
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/dirtest"
)

// brandModule is a module a brand keeps its style in, as several
// campaigns use it.
const brandModule = `
variable "subject" {
  type = string
}
variable "palette" {
  type    = string
  default = "teal and coral"
}
locals {
  style = "studio light, ${var.palette}"
}
image "hero" {
  prompt       = "${var.subject}, ${local.style}"
  image_number = 1
  seed         = 7
}
image "thumb" {
  prompt       = "${var.subject}, icon, ${local.style}"
  image_number = 1
  dir          = "${path.module}/../../thumbs/${var.subject}"
}
output "hero_path" {
  value = image.hero.outputs[0].path
}
output "style" {
  value = local.style
}
`

func loadModules(t *testing.T, files map[string]string) *Config {
	t.Helper()
	c, diags := loadTest(dirtest.New(t, files), Options{})
	if diags.HasErrors() {
		t.Fatalf("Load: %s", diagList(diags))
	}
	return c
}

// TestModuleInstances loads a module called once, with for_each and with
// count: each instance's resources are addressed under it, take its
// arguments, and write to a folder of their own unless dir says where.
func TestModuleInstances(t *testing.T) {
	c := loadModules(t, map[string]string{
		"modules/brand/main.gen.hcl": brandModule,
		"main.gen.hcl": `
module "launch" {
  source  = "./modules/brand"
  subject = "a teapot"
}
module "campaign" {
  source   = "./modules/brand"
  for_each = { spring = "tulips", autumn = "leaves" }
  subject  = each.value
  palette  = "${each.key} colours"
}
module "series" {
  source  = "./modules/brand"
  count   = 2
  subject = "cup ${count.index}"
}
image "cover" {
  prompt       = "cover in ${module.launch.style}"
  image_number = 1
}
output "paths" {
  value = { for k, m in module.campaign : k => m.hero_path }
}
`,
	})
	got := expandAll(t, c, nil)
	for addr, want := range map[string]struct{ prompt, dir string }{
		"module.launch.image.hero":              {"a teapot, studio light, teal and coral", "generated/module.launch/image/hero"},
		`module.campaign["spring"].image.hero`:  {"tulips, studio light, spring colours", "generated/module.campaign/spring/image/hero"},
		`module.campaign["autumn"].image.thumb`: {"leaves, icon, studio light, autumn colours", "thumbs/leaves"},
		"module.series[1].image.hero":           {"cup 1, studio light, teal and coral", "generated/module.series/1/image/hero"},
		"image.cover":                           {"cover in studio light, teal and coral", "generated/image/cover"},
		`module.campaign["spring"].image.thumb`: {"tulips, icon, studio light, spring colours", "thumbs/tulips"},
		"module.launch.image.thumb":             {"a teapot, icon, studio light, teal and coral", "thumbs/a teapot"},
		"module.series[0].image.thumb":          {"cup 0, icon, studio light, teal and coral", "thumbs/cup 0"},
		`module.campaign["autumn"].image.hero`:  {"leaves, studio light, autumn colours", "generated/module.campaign/autumn/image/hero"},
		"module.series[0].image.hero":           {"cup 0, studio light, teal and coral", "generated/module.series/0/image/hero"},
		"module.series[1].image.thumb":          {"cup 1, icon, studio light, teal and coral", "thumbs/cup 1"},
	} {
		inst := got[addr]
		if inst == nil {
			t.Errorf("no instance %s among %d", addr, len(got))
			continue
		}
		if p, _ := inst.Attr("prompt"); p.AsString() != want.prompt {
			t.Errorf("%s: prompt %q, want %q", addr, p.AsString(), want.prompt)
		}
		if inst.Dir != want.dir {
			t.Errorf("%s: dir %q, want %q", addr, inst.Dir, want.dir)
		}
		if inst.Addr.String() != addr {
			t.Errorf("instance %s prints as %s", addr, inst.Addr)
		}
	}
	if len(got) != 11 {
		t.Errorf("%d instances, want 11", len(got))
	}
	// An address with a module parses back to the resource Load knows.
	if r := c.Resource(res(`module.campaign["spring"].image.hero`)); r == nil || r.Name != "hero" {
		t.Errorf("Resource(module.campaign[\"spring\"].image.hero) = %v", r)
	}
	if got := c.ModuleInstances(); len(got) != 5 {
		t.Errorf("ModuleInstances = %v, want 5", got)
	}
}

// TestModuleOutputsOrderAndValues: a resource that uses a module's output
// made from one of the module's resources comes after it, and the
// outputs evaluate in a scope where it is generated.
func TestModuleOutputsOrderAndValues(t *testing.T) {
	c := loadModules(t, map[string]string{
		"modules/brand/main.gen.hcl": brandModule,
		"main.gen.hcl": `
video "cover" {
  prompt       = "animate"
  source_image = "https://example.com/${module.launch.hero_path}"
}
module "launch" {
  source  = "./modules/brand"
  subject = "a teapot"
}
output "hero" {
  value = module.launch.hero_path
}
`,
	})
	hero := res("module.launch.image.hero")
	pos := map[addrs.Resource]int{}
	for i, r := range c.Resources {
		pos[r.Addr()] = i
	}
	cover := c.Resource(res("video.cover"))
	if pos[hero] > pos[res("video.cover")] {
		t.Errorf("video.cover (%d) is ordered before module.launch.image.hero (%d)", pos[res("video.cover")], pos[hero])
	}
	if !containsAddr(cover.Refs, hero) {
		t.Errorf("video.cover refers to %v, want module.launch.image.hero among them", cover.Refs)
	}
	outs, diags := c.EvalOutputs(Scope{})
	if diags.HasErrors() {
		t.Fatal(diagList(diags))
	}
	if outs["hero"].IsKnown() {
		t.Errorf("output hero is %#v before the image is generated, want unknown", outs["hero"])
	}
	insts, _ := c.Expand(c.Resource(hero), nil)
	made := InstanceValue("c1", "g1", "succeed", []OutputValue{{ID: "o1", MediaURL: "https://x/0.png", Path: "generated/module.launch/image/hero/0.png"}})
	scope := Scope{hero: ResourceValue(c.Resource(hero), insts, map[addrs.Instance]cty.Value{insts[0].Addr: made})}
	outs, diags = c.EvalOutputs(scope)
	if diags.HasErrors() {
		t.Fatal(diagList(diags))
	}
	if got := outs["hero"]; !got.IsKnown() || got.AsString() != "generated/module.launch/image/hero/0.png" {
		t.Errorf("output hero = %#v once generated", got)
	}
	covers, diags := c.Expand(cover, scope)
	if diags.HasErrors() {
		t.Fatal(diagList(diags))
	}
	if src, _ := covers[0].Attr("source_image"); !src.IsKnown() || src.AsString() != "https://example.com/generated/module.launch/image/hero/0.png" {
		t.Errorf("video.cover's source_image = %#v", src)
	}
}

func containsAddr(list []addrs.Resource, a addrs.Resource) bool {
	for _, x := range list {
		if x == a {
			return true
		}
	}
	return false
}

// TestModuleErrors: every mistake in a module call is reported at its
// place, with what to do.
func TestModuleErrors(t *testing.T) {
	_, diags := loadTest(dirtest.New(t, map[string]string{
		"modules/brand/main.gen.hcl": brandModule,
		"modules/loop/main.gen.hcl":  "module \"again\" {\n  source = \"../loop\"\n}\n",
		"modules/settings/main.gen.hcl": `
genform {
  output_dir = "x"
}
`,
		"main.gen.hcl": `
module "missing_arg" {
  source = "./modules/brand"
}
module "typo" {
  source  = "./modules/brand"
  subject = "x"
  palete  = "y"
}
module "remote" {
  source = "git::https://example.com/brand.git"
}
module "nowhere" {
  source = "./modules/none"
}
module "loop" {
  source = "./modules/loop"
}
module "settings" {
  source = "./modules/settings"
}
module "late" {
  source  = "./modules/brand"
  subject = image.z.id
}
image "z" {
  prompt       = "${module.typo.nope} ${module.undeclared.x}"
  image_number = 1
  depends_on   = [module.typo]
}
`,
	}), Options{})
	text := diagList(diags)
	for _, want := range []string{
		`declares the variable "subject", which has no default`,
		`declares no variable named "palete"`, `Did you mean "palette"?`,
		`is not a local path`, `registry, git and other remote sources are not supported`,
		`loads modules/none, but there is no such folder`,
		`Module calls itself`,
		`the genform block belongs to the root module`,
		`cannot refer to resources`,
		`has no output named "nope"`,
		`No module call named "undeclared"`,
		`A module or a resource in one cannot be named in depends_on`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, text)
		}
	}
}

// TestModuleMovedBlocks: a moved block moves a root resource into a
// module, and one in a module moves within it, addressed from the root.
func TestModuleMovedBlocks(t *testing.T) {
	c := loadModules(t, map[string]string{
		"modules/brand/main.gen.hcl": brandModule + `
moved {
  from = image.old_thumb
  to   = image.thumb
}
`,
		"main.gen.hcl": `
module "launch" {
  source  = "./modules/brand"
  subject = "a teapot"
}
moved {
  from = image.hero
  to   = module.launch.image.hero
}
`,
	})
	for from, want := range map[string]string{
		"image.hero":                    "module.launch.image.hero",
		"module.launch.image.old_thumb": "module.launch.image.thumb",
		"module.launch.image.hero":      "module.launch.image.hero",
	} {
		got, _, _ := c.MoveTarget(inst(from))
		if got.String() != want {
			t.Errorf("MoveTarget(%s) = %s, want %s", from, got, want)
		}
	}
}

// TestModuleArgumentsSensitive: an argument made from a sensitive
// variable keeps it sensitive inside the module.
func TestModuleArgumentsSensitive(t *testing.T) {
	c := loadModules(t, map[string]string{
		"modules/brand/main.gen.hcl": `
variable "subject" {
  type = string
}
image "hero" {
  prompt       = var.subject
  image_number = 1
}
`,
		"main.gen.hcl": `
variable "secret_subject" {
  type      = string
  default   = "the unreleased kettle"
  sensitive = true
}
module "launch" {
  source  = "./modules/brand"
  subject = var.secret_subject
}
`,
	})
	insts, diags := c.Expand(c.Resource(res("module.launch.image.hero")), nil)
	if diags.HasErrors() {
		t.Fatal(diagList(diags))
	}
	if len(insts[0].Sensitive) == 0 || insts[0].Sensitive[0] != "prompt" {
		t.Errorf("Sensitive = %v, want prompt", insts[0].Sensitive)
	}
}

// TestModuleRepetitionUnknownAtValidate: validate checks a call whose
// for_each is made from a variable given no value, for whatever it will
// be; plan needs the value.
func TestModuleRepetitionUnknownAtValidate(t *testing.T) {
	files := map[string]string{
		"modules/b/main.gen.hcl": "variable \"subject\" {\n  type = string\n}\nimage \"hero\" {\n  prompt       = var.subject\n  image_number = 1\n}\n",
		"main.gen.hcl":           "variable \"names\" {\n  type = set(string)\n}\nmodule \"c\" {\n  source   = \"./modules/b\"\n  for_each = var.names\n  subject  = each.key\n}\n",
	}
	dir := dirtest.New(t, files)
	if _, diags := loadTest(dir, Options{UnknownUnset: true}); diags.HasErrors() {
		t.Fatalf("validate: %s", diagList(diags))
	}
	if _, diags := loadTest(dir, Options{}); !strings.Contains(diagList(diags), `The input variable "names" is not set`) {
		t.Fatalf("plan without the value: %s", diagList(diags))
	}
}
