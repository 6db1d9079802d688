package catalog

import (
	"errors"
	"testing"
)

// fal's sync_mode returns the media inline (data URIs) instead of file
// URLs: refused, on its key, unless false (fal's default) or null.
func TestFalSyncMode(t *testing.T) {
	testBodies(t, "fal", []bodyCase{
		{
			name: "sync_mode true refused", model: "fal-ai/flux/schnell",
			common: map[string]any{Prompt: "p"}, input: map[string]any{"sync_mode": true},
			wantErr: "returns the media inline as data URIs instead of file URLs",
		},
		{
			name: "sync_mode true refused on a model the tables do not list", model: "someone/else",
			common: map[string]any{Prompt: "p"}, input: map[string]any{"sync_mode": true},
			wantErr: "genform uses fal's queue and downloads the files",
		},
		{
			name: "sync_mode as a string refused", model: "fal-ai/flux/schnell",
			common: map[string]any{Prompt: "p"}, input: map[string]any{"sync_mode": "true"},
			wantErr: "sync_mode",
		},
		{
			name: "sync_mode false passes", model: "fal-ai/flux/schnell",
			common: map[string]any{Prompt: "p"}, input: map[string]any{"sync_mode": false},
			want: map[string]any{"prompt": "p", "sync_mode": false},
		},
	})
	_, err := Lookup("fal").Body("fal-ai/flux/dev", 0, nil, map[string]any{"sync_mode": true})
	if ie, ok := errors.AsType[*InputError](err); !ok || ie.Key != "sync_mode" {
		t.Errorf("Body's error %v names no input key sync_mode", err)
	}
}
