package reference

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
)

// TestOutputs: a creation's detail lists its files: one an image, or the
// video, from video_url or else its output's URLs.
func TestOutputs(t *testing.T) {
	tests := []struct {
		name string
		kind addrs.Kind
		det  Creation
		want []provider.Output
	}{
		{name: "images: one output each", kind: addrs.Image,
			det:  Creation{Outputs: []CreationOutput{{ID: "o0", MediaURL: "u0", ThumbnailURL: "t0"}, {ID: "o1", MediaURL: "u1"}}},
			want: []provider.Output{{Index: 0, ID: "o0", URL: "u0", ThumbnailURL: "t0"}, {Index: 1, ID: "o1", URL: "u1"}}},
		{name: "images: none", kind: addrs.Image},
		{name: "a video from video_url", kind: addrs.Video,
			det:  Creation{VideoURL: "v", ThumbnailURL: "t", Outputs: []CreationOutput{{ID: "o0", MediaURL: "other"}}},
			want: []provider.Output{{ID: "o0", URL: "v", ThumbnailURL: "t"}}},
		{name: "a video without video_url takes its output's URLs", kind: addrs.Video,
			det:  Creation{ThumbnailURL: "t", Outputs: []CreationOutput{{ID: "o0", MediaURL: "m", ThumbnailURL: "t0"}}},
			want: []provider.Output{{ID: "o0", URL: "m", ThumbnailURL: "t0"}}},
		{name: "a video with no URL has no output", kind: addrs.Video,
			det: Creation{ThumbnailURL: "t", Outputs: []CreationOutput{{ID: "o0"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Outputs(tc.kind, &tc.det), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
