package catalog

import (
	"testing"

	"github.com/genform/genform/internal/addrs"
)

func TestOpenAIBody(t *testing.T) {
	tests := []bodyCase{
		{
			name: "count and ratio mapped, input passed through", model: "gpt-image-2",
			common: map[string]any{Prompt: "a fox", ImageNumber: float64(3), AspectRatio: "3:2"},
			input:  map[string]any{"quality": "high", "background": "transparent", "output_format": "webp"},
			want: map[string]any{"prompt": "a fox", "n": float64(3), "size": "1536x1024",
				"quality": "high", "background": "transparent", "output_format": "webp"},
		},
		{
			name: "portrait", model: "gpt-image-2.5-flare", common: map[string]any{Prompt: "p", AspectRatio: "2:3"},
			want: map[string]any{"prompt": "p", "size": "1024x1536"},
		},
		{
			name: "a size of its own in input", model: "gpt-image-2", common: map[string]any{Prompt: "p"},
			input: map[string]any{"size": "1536x864"},
			want:  map[string]any{"prompt": "p", "size": "1536x864"},
		},
		{
			name: "no standard size for the ratio", model: "gpt-image-2",
			common: map[string]any{AspectRatio: "16:9"}, wantErr: "set size in input",
		},
		{
			name: "size set twice", model: "gpt-image-2",
			common: map[string]any{AspectRatio: "1:1"}, input: map[string]any{"size": "1024x1024"}, wantErr: "set it once",
		},
		{
			name: "seed is not a field", model: "gpt-image-2",
			common: map[string]any{Seed: float64(4)}, wantErr: "does not map seed",
		},
		{
			name: "negative prompt is not a field", model: "gpt-image-2",
			common: map[string]any{NegativePrompt: "blur"}, wantErr: "does not map negative_prompt",
		},
		{
			name: "the model is the block's", model: "gpt-image-2",
			input: map[string]any{"model": "gpt-image-1"}, wantErr: "model",
		},
		{
			name: "no stream", model: "gpt-image-2",
			input: map[string]any{"stream": true}, wantErr: "stream",
		},
		{
			name: "stream false is the default", model: "gpt-image-2",
			common: map[string]any{Prompt: "p"}, input: map[string]any{"stream": false},
			want: map[string]any{"prompt": "p", "stream": false},
		},
		{
			name: "no partial images", model: "gpt-image-2",
			input: map[string]any{"partial_images": float64(2)}, wantErr: "partial_images",
		},
		{
			name: "no video", model: "gpt-image-2", kind: addrs.Video,
			common: map[string]any{Prompt: "p"}, wantErr: "makes images",
		},
	}
	testBodies(t, "openai", tests)
}

func TestOpenAITables(t *testing.T) {
	p := Lookup("openai")
	if p.KeyEnv != "OPENAI_API_KEY" || p.Recovery != RecoverNone || p.Cancel || !p.InlineOutputs || p.Limits.RequestsPerMinute != 5 {
		t.Errorf("openai's provider row: %+v", p)
	}
	for _, m := range []string{"gpt-image-2", "gpt-image-2-2026-04-21", "gpt-image-2.5-sunburst-2026-09-08", "gpt-image-1-mini"} {
		c := p.Caps(m)
		if !p.Listed(m) || c.MostImages() != 10 || !c.Takes(AspectRatio) || c.Takes(Seed) || c.Takes(NegativePrompt) || c.Makes(addrs.Video) {
			t.Errorf("%s: listed %v, caps %+v", m, p.Listed(m), c)
		}
	}
	// Retired: its model page says so; it takes the general capabilities,
	// and OpenAI answers it 404.
	if p.Listed("gpt-image-1") {
		t.Error("gpt-image-1, retired, is listed")
	}
	if c := p.Caps("gpt-image-9"); c.Takes(ImageNumber) || c.Takes(AspectRatio) || c.MostImages() != 1 || len(c.Counted) != 0 || !IsCountKey("n") {
		t.Errorf("the general capabilities: %+v", c)
	}
}
