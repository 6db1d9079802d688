package openai_test

import (
	"bytes"
	"image"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/openai"
	"github.com/genform/genform/internal/provider/providertest"
)

// TestLive makes one low quality gpt-image-2 image on OpenAI itself, paid
// for with OPENAI_API_KEY, when GENFORM_LIVE=1:
// go test -run TestLive ./internal/provider/openai
//
// It runs as providertest.Live does (LiveAdapter: the key checked; one
// submission, its status and result), but checks the image in the
// answer, decoding it, where Live downloads URLs: OpenAI's images have
// none.
func TestLive(t *testing.T) {
	ctx, p, h := providertest.LiveAdapter(t, "OPENAI_API_KEY", func(c provider.Config) (provider.Provider, error) { return openai.New(c) })
	job, err := p.Submit(ctx, provider.Request{Kind: addrs.Image, Target: "gpt-image-2",
		Body: []byte(`{"prompt":"a lighthouse at dusk, watercolour","n":1,"size":"1024x1024","quality":"low"}`)})
	if h.Keep(err) != nil {
		t.Fatalf("submitting (this may have been charged): %v", err)
	}
	st, err := p.Status(ctx, job)
	if h.Keep(err) != nil || st.State != provider.Done {
		t.Fatalf("job %s: %+v, %v", job.ID, st, err)
	}
	res, err := p.Result(ctx, job)
	if h.Keep(err) != nil || len(res.Outputs) != 1 {
		t.Fatalf("result of job %s: %+v, %v", job.ID, res, err)
	}
	o := res.Outputs[0]
	cfg, format, err := image.DecodeConfig(bytes.NewReader(o.Data))
	if err != nil || o.MediaType == "" {
		t.Fatalf("the image does not decode (%v) or has no media type (%q)", err, o.MediaType)
	}
	t.Logf("job %s: a %s of %dx%d, %d bytes, %s; usage %s", job.ID, format, cfg.Width, cfg.Height, len(o.Data), o.MediaType, res.Usage)
}
