package lumaagents_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/lumaagents"
	"github.com/genform/genform/internal/provider/providertest"
	simagents "github.com/genform/genform/internal/simulator/lumaagents"
	"github.com/genform/genform/internal/simulator/simkit"
)

const key = "luma-api-test-key-0123456789"

// start is the adapter against its simulator, sending key k.
var start = providertest.Starter(key, simagents.New, lumaagents.New)

const completed = "completed"

// sent is the body of the n-th generation the simulator made.
func sent(t *testing.T, rep simkit.JobsReport, n int) map[string]any {
	t.Helper()
	var b map[string]any
	if err := json.Unmarshal(rep.Jobs[n].Body, &b); err != nil {
		t.Fatalf("job %d body %s: %v", n, rep.Jobs[n].Body, err)
	}
	return b
}

func TestImagesEditsAndVideos(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	img, res := h.Done(providertest.Request(addrs.Image, "uni-1", map[string]any{"prompt": "a lighthouse", "aspect_ratio": "3:1"}), completed)
	if len(res.Outputs) != 1 || res.Kind != addrs.Image || res.CreationID != img.ID {
		t.Fatalf("image result %+v of job %+v", res, img)
	}
	dir := t.TempDir()
	d, err := h.P.Download(context.Background(), res.Outputs[0].URL, dir, "image")
	if h.Keep(err) != nil || !strings.HasSuffix(d.Path, ".png") {
		t.Fatalf("download: %+v, %v", d, err)
	}
	if b := sent(t, h.Sim.Jobs(), 0); b["model"] != "uni-1" || b["type"] != "image" {
		t.Errorf("the image was sent as %v: the model and the type go in the body", b)
	}

	// An edit of that image by its generation id, on uni-1-max: the type
	// follows the source.
	_, res = h.Done(providertest.Request(addrs.Image, "uni-1-max", map[string]any{
		"prompt": "at night", "source": map[string]any{"generation_id": img.ID},
	}), completed)
	if b := sent(t, h.Sim.Jobs(), 1); b["type"] != "image_edit" || len(res.Outputs) != 1 {
		t.Errorf("an image with a source was sent as %v, want image_edit", b)
	}

	// A video from the image's URL, then one extending that video by its
	// generation id.
	first, res := h.Done(providertest.Request(addrs.Video, "ray-3.2", map[string]any{
		"prompt": "waves", "aspect_ratio": "16:9",
		"video": map[string]any{"duration": "5s", "resolution": "720p", "start_frame": map[string]any{"url": res.Outputs[0].URL}},
	}), completed)
	if len(res.Outputs) != 1 || res.Kind != addrs.Video {
		t.Fatalf("video result %+v", res)
	}
	_, res = h.Done(providertest.Request(addrs.Video, "ray-3.2", map[string]any{
		"prompt": "more waves", "video": map[string]any{"start_frame": map[string]any{"generation_id": first.ID}},
	}), completed)
	h.DownloadVideo(res.Outputs[0].URL, dir)
	if b := sent(t, h.Sim.Jobs(), 3); b["type"] != "video" {
		t.Errorf("a video was sent as %v", b)
	}
}

func TestFailureAndRefusal(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	h.Failures([]providertest.Failure{
		{Prompt: "a cat [fail]", Reason: "Internal model error during generation (generation_failed)"},
		{Prompt: "a cat [nsfw]", Refused: true, Reason: "The prompt or an input image violated the content guidelines (content_moderated)"},
	}, func(prompt string) (provider.Job, error) {
		return h.Submit(providertest.Request(addrs.Image, "uni-1", map[string]any{"prompt": prompt}))
	}, func(f providertest.Failure, j provider.Job, last provider.Status) {
		if last.Reason != f.Reason {
			t.Errorf("%q ended with reason %q, want Luma's words and code", f.Prompt, last.Reason)
		}
		if _, err := h.P.Result(context.Background(), j); h.Keep(err) == nil {
			t.Errorf("%q: a failed generation has a result", f.Prompt)
		}
	})
}

// The create refusals of the error reference make nothing and are never
// possibly paid: 400 for a body the schema refuses, 422 for a
// combination it rules out.
func TestCreateRefusalsMakeNothing(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	for _, c := range []struct {
		kind  addrs.Kind
		model string
		body  map[string]any
		code  int
	}{
		{addrs.Image, "uni-1", map[string]any{"prompt": ""}, 400},
		{addrs.Image, "uni-1", map[string]any{"prompt": "a ratio", "aspect_ratio": "5:4"}, 400},
		{addrs.Image, "uni-2", map[string]any{"prompt": "a model"}, 400},
		{addrs.Video, "ray-3.2", map[string]any{"prompt": "a ratio", "aspect_ratio": "3:1"}, 422},
		{addrs.Video, "ray-3.2", map[string]any{"prompt": "a loop", "video": map[string]any{"duration": "10s", "loop": true}}, 422},
		{addrs.Video, "ray-3.2", map[string]any{"prompt": "dim", "video": map[string]any{"hdr": true, "resolution": "540p"}}, 422},
		{addrs.Video, "ray-3.2", map[string]any{"prompt": "long", "video": map[string]any{"duration": "10s", "start_frame": map[string]any{"url": "https://cdn.example/a.png"}}}, 422},
		{addrs.Image, "ray-3.2", map[string]any{"prompt": "an image of a video model"}, 422},
		{addrs.Video, "ray-3.2", map[string]any{"prompt": "chained", "video": map[string]any{"start_frame": map[string]any{"generation_id": "123e4567-e89b-12d3-a456-426614174000"}}}, 422},
	} {
		_, err := h.Submit(providertest.Request(c.kind, c.model, c.body))
		var se *apiclient.Error
		if !errors.As(err, &se) || se.HTTPStatus != c.code || provider.IsPossiblyPaid(err) {
			t.Errorf("%s %v: %v, want a %d refusal that made nothing", c.model, c.body, err, c.code)
		}
	}
	if rep := h.Sim.Jobs(); len(rep.Jobs) != 0 || rep.Requests != 9 {
		t.Errorf("report %+v: want nine requests and no generation", rep)
	}
}

// A type that makes another kind is refused before anything is sent.
func TestTypeOfAnotherKind(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	_, err := h.Submit(providertest.Request(addrs.Image, "uni-1", map[string]any{"prompt": "p", "type": "video"}))
	if err == nil || !strings.Contains(err.Error(), `type "video" makes no image`) {
		t.Fatalf("an image of type video: %v", err)
	}
	if rep := h.Sim.Jobs(); rep.Requests != 0 {
		t.Errorf("%d requests sent, want none", rep.Requests)
	}
}

// Too little balance is answered 402: a cap, which stops the apply in
// Luma's words, sent once, never possibly paid.
func TestOutOfBalanceIsACap(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	_, err := h.Submit(providertest.Request(addrs.Image, "uni-1", map[string]any{"prompt": "spent " + simkit.QuotaMarker}))
	if !errors.Is(err, provider.ErrCapReached) || provider.IsPossiblyPaid(err) || !strings.Contains(err.Error(), "Insufficient balance") {
		t.Fatalf("a 402: %v, want ErrCapReached in Luma's words", err)
	}
	if rep := h.Sim.Jobs(); rep.Requests != 1 || len(rep.Jobs) != 0 {
		t.Errorf("report %+v: want one request and no generation", rep)
	}
}

// The API has no documented read that makes nothing, so no key is checked
// before a create: CheckCredentials passes any key, and a wrong one is
// refused at the create, as a key and as nothing made.
func TestCheckCredentials(t *testing.T) {
	bad := start(t, simkit.Options{}, "luma-api-not-the-key-000000")
	if err := bad.P.CheckCredentials(context.Background()); err != nil {
		t.Fatalf("CheckCredentials: %v, want nothing checked", err)
	}
	_, err := bad.P.Submit(context.Background(), provider.JSONRequest(addrs.Image, "uni-1", map[string]any{"prompt": "a teapot"}))
	if !errors.Is(bad.Keep(err), apiclient.ErrUnauthorized) || provider.IsPossiblyPaid(err) {
		t.Fatalf("a create with a wrong key: %v, want a refused key, nothing made", err)
	}
	if rep := bad.Sim.Jobs(); len(rep.Jobs) != 0 {
		t.Errorf("a wrong key made %d generations", len(rep.Jobs))
	}
}

// The output URLs are presigned for an hour: each Result reads the
// generation anew.
func TestResultReadsAnew(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	j, _ := h.Done(providertest.Request(addrs.Image, "uni-1", map[string]any{"prompt": "twice"}), completed)
	before := h.Sim.Jobs().Jobs[0].DetailRequests + h.Sim.Jobs().Jobs[0].StatusRequests
	if _, err := h.P.Result(context.Background(), j); h.Keep(err) != nil {
		t.Fatal(err)
	}
	after := h.Sim.Jobs().Jobs[0].DetailRequests + h.Sim.Jobs().Jobs[0].StatusRequests
	if after != before+1 {
		t.Errorf("a Result read the generation %d times, want once more", after-before)
	}
}
