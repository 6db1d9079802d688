package lumaagents

import (
	"encoding/json"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
	"github.com/genform/genform/internal/schema/schematest"
)

const genID = "123e4567-e89b-12d3-a456-426614174000"

func TestBodies(t *testing.T) {
	tests := []schematest.BodyCase{
		{
			Name: "uni image", Model: "uni-1", Kind: addrs.Image,
			Common: map[string]any{schema.Prompt: "a fox", schema.AspectRatio: "3:1"},
			Input:  map[string]any{"output_format": "jpeg", "web_search": true},
			Want:   map[string]any{"prompt": "a fox", "aspect_ratio": "3:1", "output_format": "jpeg", "web_search": true},
		},
		{
			Name: "an edit from a URL", Model: "uni-1-max", Kind: addrs.Image,
			Common: map[string]any{schema.Prompt: "at night", schema.SourceImage: "https://cdn.example/a.jpg"},
			Want:   map[string]any{"prompt": "at night", "source": map[string]any{"url": "https://cdn.example/a.jpg"}},
		},
		{
			Name: "an edit from bytes", Model: "uni-1", Kind: addrs.Image,
			Common: map[string]any{schema.SourceImage: "data:image/png;base64,AAAA"},
			Want:   map[string]any{"source": map[string]any{"data": "AAAA", "media_type": "image/png"}},
		},
		{
			Name: "ray text to video", Model: "ray-3.2", Kind: addrs.Video,
			Common: map[string]any{schema.Prompt: "waves", schema.Duration: json.Number("10"), schema.Resolution: json.Number("1080")},
			Input:  map[string]any{"video": map[string]any{"hdr": false}},
			Want:   map[string]any{"prompt": "waves", "video": map[string]any{"duration": "10s", "resolution": "1080p", "hdr": false}},
		},
		{
			Name: "source_image is the start frame", Model: "ray-3.2", Kind: addrs.Video,
			Common: map[string]any{schema.SourceImage: genID},
			Want:   map[string]any{"video": map[string]any{"start_frame": map[string]any{"generation_id": genID}}},
		},
		{
			Name: "two key frames", Model: "ray-3.2", Kind: addrs.Video,
			Common: map[string]any{schema.SourceImages: []any{"https://cdn.example/a.jpg", genID}},
			Want: map[string]any{"video": map[string]any{
				"start_frame": map[string]any{"url": "https://cdn.example/a.jpg"},
				"end_frame":   map[string]any{"generation_id": genID},
			}},
		},
		{
			Name: "three key frames", Model: "ray-3.2", Kind: addrs.Video,
			Common:  map[string]any{schema.SourceImages: []any{genID, genID, genID}},
			WantErr: "one or two key frames",
		},
		{
			Name: "a data URI without base64", Model: "uni-1", Kind: addrs.Image,
			Common:  map[string]any{schema.SourceImage: "data:,hello"},
			WantErr: "not base64",
		},
		{
			Name: "a resolution ray-3.2 does not make", Model: "ray-3.2", Kind: addrs.Video,
			Common:  map[string]any{schema.Resolution: json.Number("2160")},
			WantErr: "540, 720 or 1080",
		},
		{
			Name: "the length is the block's", Model: "ray-3.2", Kind: addrs.Video,
			Input:   map[string]any{"video": map[string]any{"duration": "10s"}},
			WantErr: "set duration instead",
		},
		{
			Name: "a video option set twice", Model: "ray-3.2", Kind: addrs.Video,
			Common:  map[string]any{schema.Resolution: json.Number("720")},
			Input:   map[string]any{"video": map[string]any{"resolution": "1080p"}},
			WantErr: "video.resolution",
		},
		{
			Name: "seed is not mapped", Model: "uni-1", Kind: addrs.Image,
			Common:  map[string]any{schema.Seed: json.Number("3")},
			WantErr: "does not map seed",
		},
		{
			Name: "the model is the block's", Model: "uni-1", Kind: addrs.Image,
			Input:   map[string]any{"model": "uni-1-max"},
			WantErr: `input sets "model"`,
		},
	}
	schematest.Bodies(t, Table, tests)
}

func TestTable(t *testing.T) {
	if Table.Recovery != schema.RecoverNone || Table.Cancel || Table.KeyEnv != "LUMA_AGENTS_API_KEY" || Table.BaseURL != "https://agents.lumalabs.ai/v1" {
		t.Errorf("recovery %v, cancel %v, key %s, base %s", Table.Recovery, Table.Cancel, Table.KeyEnv, Table.BaseURL)
	}
	for _, m := range []string{"uni-1", "uni-1-max"} {
		c := Table.Caps(m)
		if !c.Makes(addrs.Image) || c.Makes(addrs.Video) || c.Takes(schema.Seed) || c.MostImages() != 1 || len(c.AspectRatios) != 12 {
			t.Errorf("%s caps %+v: images only, one a request, twelve ratios, no seed", m, c)
		}
	}
	c := Table.Caps("ray-3.2")
	if !c.Makes(addrs.Video) || c.MostSeconds() != 10 || c.MaxSourceImages != 2 || len(c.AspectRatios) != 6 {
		t.Errorf("ray-3.2 caps %+v", c)
	}
	if w, h, ok := Table.Pixels("ray-3.2", addrs.Video, map[string]any{"aspect_ratio": "9:16", "video": map[string]any{"resolution": "1080p"}}); !ok || w != 1080 || h != 1920 {
		t.Errorf("a 1080p 9:16 frame is %dx%d (%v)", w, h, ok)
	}
	if c := Table.Caps("ray-4"); !c.Takes(schema.Prompt) || len(c.Attrs) != 1 {
		t.Errorf("an unlisted model takes %+v, want prompt alone", c)
	}
}
