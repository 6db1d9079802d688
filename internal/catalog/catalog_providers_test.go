package catalog

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genform/genform/internal/addrs"
)

func TestProviderBodies(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		model    string
		common   map[string]any
		input    map[string]any
		want     map[string]any
		wantErr  bool
	}{
		{
			name: "fal flux dev maps count and ratio", provider: "fal", model: "fal-ai/flux/dev",
			common: map[string]any{Prompt: "a fox", Seed: float64(7), ImageNumber: float64(3), AspectRatio: "16:9"},
			input:  map[string]any{"guidance_scale": 3.5},
			want:   map[string]any{"prompt": "a fox", "seed": float64(7), "num_images": float64(3), "image_size": "landscape_16_9", "guidance_scale": 3.5},
		},
		{
			name: "fal flux schnell portrait", provider: "fal", model: "fal-ai/flux/schnell",
			common: map[string]any{Prompt: "p", AspectRatio: "9:16"},
			want:   map[string]any{"prompt": "p", "image_size": "portrait_16_9"},
		},
		{
			name: "fal unknown ratio refused", provider: "fal", model: "fal-ai/flux/dev",
			common: map[string]any{AspectRatio: "21:9"}, wantErr: true,
		},
		{
			name: "fal input passes through unchanged", provider: "fal", model: "fal-ai/some/video",
			common: map[string]any{Prompt: "waves"},
			input:  map[string]any{"duration": "5", "nested": map[string]any{"a": []any{float64(1)}}},
			want:   map[string]any{"prompt": "waves", "duration": "5", "nested": map[string]any{"a": []any{float64(1)}}},
		},
		{
			name: "fal attribute set twice refused", provider: "fal", model: "fal-ai/flux/dev",
			common: map[string]any{ImageNumber: float64(2)}, input: map[string]any{"num_images": float64(2)}, wantErr: true,
		},
		{
			name: "fal resolution not mapped", provider: "fal", model: "fal-ai/flux/dev",
			common: map[string]any{Resolution: float64(720)}, wantErr: true,
		},
		{
			name: "replicate flux schnell", provider: "replicate", model: "black-forest-labs/flux-schnell",
			common: map[string]any{Prompt: "a fox", Seed: float64(1), ImageNumber: float64(2), AspectRatio: "21:9"},
			input:  map[string]any{"go_fast": true},
			want:   map[string]any{"prompt": "a fox", "seed": float64(1), "num_outputs": float64(2), "aspect_ratio": "21:9", "go_fast": true},
		},
		{
			name: "replicate pinned version", provider: "replicate", model: "owner/name:" + "abc",
			common: map[string]any{Prompt: "x"},
			want:   map[string]any{"prompt": "x"},
		},
		{
			name: "replicate set twice refused", provider: "replicate", model: "black-forest-labs/flux-schnell",
			common: map[string]any{Prompt: "x"}, input: map[string]any{"prompt": "y"}, wantErr: true,
		},
		{
			name: "replicate resolution not mapped", provider: "replicate", model: "black-forest-labs/flux-schnell",
			common: map[string]any{Resolution: float64(720)}, wantErr: true,
		},
		{
			name: "replicate kling first frame", provider: "replicate", model: "kwaivgi/kling-v2.1",
			common: map[string]any{Prompt: "waves", SourceImage: "https://x/y.png", Duration: float64(10)},
			want:   map[string]any{"prompt": "waves", "start_image": "https://x/y.png", "duration": float64(10)},
		},
		{
			name: "fal kling image to video", provider: "fal", model: "fal-ai/kling-video/v2.1/standard/image-to-video",
			common: map[string]any{Prompt: "waves", SourceImage: "data:image/png;base64,AA==", Duration: float64(5), NegativePrompt: "blur"},
			want:   map[string]any{"prompt": "waves", "image_url": "data:image/png;base64,AA==", "duration": "5", "negative_prompt": "blur"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Lookup(tt.provider)
			input := map[string]any{}
			for k, v := range tt.input {
				input[k] = v
			}
			got, err := p.Body(tt.model, addrs.Image, tt.common, tt.input)
			if !checkBody(t, got, err, tt.wantErr, "", tt.want) {
				return
			}
			if diff := cmp.Diff(input, tt.input); diff != "" && tt.input != nil {
				t.Errorf("Body changed its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestProviderTables(t *testing.T) {
	fal, rep := Lookup("fal"), Lookup("replicate")
	if fal == nil || rep == nil {
		t.Fatalf("providers registered: %v", Names())
	}
	if fal.Recovery != RecoverNone || rep.Recovery != RecoverByListing {
		t.Errorf("recovery: fal %v, replicate %v", fal.Recovery, rep.Recovery)
	}
	for _, m := range []string{"fal-ai/flux/schnell", "fal-ai/flux/dev"} {
		if c := fal.Caps(m); c.MostImages() != 4 || !c.Takes(ImageNumber) {
			t.Errorf("%s caps %+v", m, c)
		}
	}
	if c := rep.Caps("black-forest-labs/flux-schnell:0123"); c.MostImages() != 4 || c.Counted[0] != "num_outputs" {
		t.Errorf("a pinned flux-schnell takes %+v", c)
	}
	if c := fal.Caps("someone/else"); !c.Makes(addrs.Video) || c.Takes(Seed) {
		t.Errorf("fal general caps %+v", c)
	}
}

// checkBody checks what a provider's Body made: when fails, an error
// (holding wantErr, when it is set); else no error, and want. It reports
// whether Body made a body.
func checkBody(t *testing.T, got map[string]any, err error, fails bool, wantErr string, want map[string]any) bool {
	t.Helper()
	if fails {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("Body = %v, %v; want an error saying %q", got, err, wantErr)
		}
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Body (-want +got):\n%s", diff)
	}
	return true
}

// bodyCase is a case of a provider's Body: what it makes of model, kind
// (an image when 0), common and input: want, or an error (when fails, or
// wantErr is set), holding wantErr when it is set.
type bodyCase struct {
	name    string
	model   string
	kind    addrs.Kind
	common  map[string]any
	input   map[string]any
	want    map[string]any
	wantErr string
	fails   bool
}

// testBodies runs each case of provider's Body as a subtest.
func testBodies(t *testing.T, provider string, tests []bodyCase) {
	t.Helper()
	p := Lookup(provider)
	if p == nil {
		t.Fatalf("%s is not registered: %v", provider, Names())
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind := tt.kind
			if kind == 0 {
				kind = addrs.Image
			}
			got, err := p.Body(tt.model, kind, tt.common, tt.input)
			checkBody(t, got, err, tt.fails || tt.wantErr != "", tt.wantErr, tt.want)
		})
	}
}

// A dated snapshot of a listed model takes what the model takes, one
// released after the tables were written included; a date that is not
// one, or a snapshot of an unlisted model, is taken as any other model.
func TestDatedSnapshots(t *testing.T) {
	p := Lookup("openai")
	for _, tt := range []struct {
		model  string
		listed bool
	}{
		{"gpt-image-2", true},
		{"gpt-image-2-2026-04-21", true},
		{"gpt-image-2-2027-03-01", true},
		{"gpt-image-2-2027-13-01", false},
		{"gpt-image-9-2027-03-01", false},
	} {
		if got := p.Listed(tt.model); got != tt.listed {
			t.Errorf("Listed(%q) = %v, want %v", tt.model, got, tt.listed)
		}
		if takes := p.Caps(tt.model).Takes(AspectRatio); takes != tt.listed {
			t.Errorf("Caps(%q) takes aspect_ratio: %v, want %v", tt.model, takes, tt.listed)
		}
	}
}
