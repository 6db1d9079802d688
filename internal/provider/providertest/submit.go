package providertest

import (
	"context"
	"encoding/json"
	"os"
	"strings"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
)

// Request is a request of kind for model with body as its JSON.
func Request(kind addrs.Kind, model string, body map[string]any) provider.Request {
	b, err := json.Marshal(body)
	if err != nil {
		// A test's body is literal values; one that does not encode is the
		// test's mistake.
		panic(err)
	}
	return provider.Request{Kind: kind, Target: model, Body: b}
}

// RequestOf is a request for model with body, of what the model's id
// says it makes (fal's and Replicate's ids name their videos): a video
// when the id holds "video", an image otherwise.
func RequestOf(model string, body map[string]any) provider.Request {
	kind := addrs.Image
	if strings.Contains(model, "video") {
		kind = addrs.Video
	}
	return Request(kind, model, body)
}

// Submit sends r through the adapter, keeping its error.
func (h *Harness) Submit(r provider.Request) (provider.Job, error) {
	return h.SubmitCtx(context.Background(), r)
}

// SubmitCtx is Submit bounded by ctx (a deadline the adapter passes on).
func (h *Harness) SubmitCtx(ctx context.Context, r provider.Request) (provider.Job, error) {
	j, err := h.P.Submit(ctx, r)
	return j, h.Keep(err)
}

// Done submits r, follows its job to its end, which must be done with
// the provider's status raw, and fetches its result.
func (h *Harness) Done(r provider.Request, raw string) (provider.Job, *provider.Result) {
	h.T.Helper()
	j, err := h.Submit(r)
	if err != nil {
		h.T.Fatal(err)
	}
	if st := h.Ended(j); st.State != provider.Done || st.Raw != raw {
		h.T.Fatalf("job %s ended %+v, want done and %s", j.ID, st, raw)
	}
	res, err := h.P.Result(context.Background(), j)
	if h.Keep(err) != nil {
		h.T.Fatal(err)
	}
	return j, res
}

// DownloadVideo downloads url, a video's output, into dir and checks it
// is what the simulators make of a video: an animated GIF.
func (h *Harness) DownloadVideo(url, dir string) {
	h.T.Helper()
	d, err := h.P.Download(context.Background(), url, dir, "video")
	if h.Keep(err) != nil {
		h.T.Fatal(err)
	}
	if b, _ := os.ReadFile(d.Path); !strings.HasPrefix(string(b), "GIF8") {
		h.T.Errorf("the video is not an animated GIF: %s", d.Path)
	}
}
