package secrets

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// TestHider: a record's hidden attributes are those the configuration
// makes from a sensitive value, and those holding a secret variable's
// value in any case; their values are then hidden wherever they appear
// (the service's detail echoes the prompt). A short secret hides only
// what equals it; a record with nothing to hide is shown as it is, byte
// for byte.
func TestHider(t *testing.T) {
	rec := &statefile.Resource{
		Addr:     addrs.MustParseInstance("image.a"),
		Endpoint: addrs.Text2Image,
		Request:  json.RawMessage(`{"config":{"image_number":1},"is_public":false,"negative_prompt":"no blur","prompt":"a poster saying OPEN-SESAME","settings":{"aspect_ratio":"16:9","resolution":720,"seed":918273}}`),
		Detail:   json.RawMessage(`{"creation_id":"c1","prompt":"a poster saying OPEN-SESAME","outputs":[{"media_url":"https://m/ab/0.png"}],"note":"made from: a poster saying OPEN-SESAME"}`),
		Failure:  &statefile.Failure{Endpoint: addrs.Text2Image, Request: json.RawMessage(`{"prompt":"then open-sesame again","config":{"image_number":1}}`)},
	}
	h := &Hider{byResource: map[addrs.Resource][]string{}, secrets: []string{"open-sesame", "ab"}, numbers: []json.Number{"918273"}}
	rh := h.Of(rec)
	for _, name := range []string{"prompt", "seed"} {
		if !rh.Hides(name) {
			t.Errorf("%s is not hidden", name)
		}
	}
	if rh.Hides("negative_prompt") || rh.Hides("aspect_ratio") {
		t.Error("attributes holding no secret are hidden")
	}
	req := string(rh.JSON(rec.Request))
	det := string(rh.JSON(rec.Detail))
	fail := string(rh.JSON(rec.Failure.Request))
	for where, got := range map[string]string{"request": req, "detail": det, "failure": fail} {
		if strings.Contains(strings.ToLower(got), "sesame") || strings.Contains(got, "918273") {
			t.Errorf("the %s shows a secret: %s", where, got)
		}
		if !strings.Contains(got, `"(sensitive)"`) {
			t.Errorf("the %s hides nothing: %s", where, got)
		}
	}
	if !strings.Contains(det, "https://m/ab/0.png") || !strings.Contains(req, `"no blur"`) {
		t.Errorf("a two-letter secret hid more than what equals it: %s %s", det, req)
	}
	attrs := rh.Attrs(RecordAttrs(rec), Value{})
	if _, ok := attrs["prompt"].(Value); !ok || attrs["negative_prompt"] != "no blur" {
		t.Errorf("attrs = %v", attrs)
	}

	// The configuration's own marks, with no secret value to look for.
	h = &Hider{byResource: map[addrs.Resource][]string{addrs.MustParseInstance("image.a").Resource: {"negative_prompt"}}}
	if got := string(h.Of(rec).JSON(rec.Request)); !strings.Contains(got, `"negative_prompt":"(sensitive)"`) {
		t.Errorf("the configuration's sensitive attribute is shown: %s", got)
	}
	// Nothing to hide: the same bytes.
	plain := &statefile.Resource{Addr: addrs.MustParseInstance("image.b"), Endpoint: addrs.Text2Image, Request: rec.Request}
	if rh := (&Hider{secrets: []string{"zzz-not-there"}}).Of(plain); string(rh.JSON(plain.Request)) != string(plain.Request) {
		t.Errorf("a request with nothing hidden was re-encoded")
	}
}

// TestMasker: the messages of an apply hide the secret variables' values
// and the sensitive attributes' values, in any case and the whole value
// first, and the errors they wrap are still what errors.Is sees. A
// message with nothing to hide is the same error.
func TestMasker(t *testing.T) {
	p := &plans.Plan{Changes: []*plans.Change{{
		Addr:      addrs.MustParseInstance("image.a"),
		Sensitive: []string{"prompt"},
		After:     map[string]any{"prompt": "b3Blbi1zZXNhbWU=", "resolution": 720},
	}}}
	m := NewMasker(&Hider{secrets: []string{"open-sesame", "ab"}, numbers: []json.Number{"918273"}}, p)
	base := errors.New("refused")
	err := m.Err(fmt.Errorf("prompt %q (OPEN-SESAME), seed 918273, was b3Blbi1zZXNhbWU=, at 720 in a lab: %w", "say open-sesame", base))
	want := `prompt "say (sensitive)" ((sensitive)), seed (sensitive), was (sensitive), at 720 in a lab: refused`
	if err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
	if !errors.Is(err, base) {
		t.Error("the masked error does not wrap the original")
	}
	if plain := errors.New("nothing here"); m.Err(plain) != plain {
		t.Error("an error with nothing to hide was replaced")
	}
	if m.Err(nil) != nil || NewMasker(nil, nil).Text("open-sesame") != "open-sesame" {
		t.Error("an empty masker hides something")
	}
}
