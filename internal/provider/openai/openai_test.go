package openai_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	_ "image/jpeg"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/openai"
	"github.com/genform/genform/internal/provider/providertest"
	simoai "github.com/genform/genform/internal/simulator/openai"
	"github.com/genform/genform/internal/simulator/simkit"
)

const key = "sk-test-key-0123456789abcdef"

// start is the adapter against its simulator, sending key k.
var start = providertest.Starter(key, simoai.New, openai.New)

// another is the adapter of another process against h's simulator.
func another(h *providertest.Harness) *openai.Provider {
	h.T.Helper()
	p, err := openai.New(provider.Config{BaseURL: h.Server.URL, Key: key})
	if err != nil {
		h.T.Fatal(err)
	}
	return p
}

// request is a request of images from model with body: the Images API
// makes nothing else.
func request(model string, body map[string]any) provider.Request {
	return providertest.Request(addrs.Image, model, body)
}

func TestImagesInline(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	ctx := context.Background()
	r := request("gpt-image-2", map[string]any{"prompt": "a lighthouse", "n": 2, "size": "1536x1024", "quality": "low"})
	j, err := h.SubmitCtx(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if !provider.ValidID(j.ID) || !strings.HasPrefix(j.ID, "img-") || j.Kind != addrs.Image || j.Target != "gpt-image-2" {
		t.Fatalf("job %+v", j)
	}
	var hd openai.Handle
	if json.Unmarshal(j.Handle, &hd) != nil || hd.Images != 2 || hd.Created == 0 || hd.Refusal != "" {
		t.Errorf("handle %s: want the answer's created and its 2 images, and no bytes", j.Handle)
	}
	seen := h.Follow(j)
	if st := seen[0]; len(seen) != 1 || st.State != provider.Done || !st.Known || st.Raw != "generated" || st.Progress != 1 {
		t.Fatalf("statuses %+v: want done at once", seen)
	}
	res, err := h.P.Result(ctx, j)
	if h.Keep(err) != nil {
		t.Fatal(err)
	}
	if len(res.Outputs) != 2 || res.CreationID != j.ID || res.Kind != addrs.Image || res.Version != "" {
		t.Fatalf("result %+v", res)
	}
	for i, o := range res.Outputs {
		cfg, format, err := image.DecodeConfig(bytes.NewReader(o.Data))
		if err != nil || format != "png" || cfg.Width != 1536 || cfg.Height != 1024 || o.MediaType != "image/png" || o.URL != "" || o.Index != i {
			t.Errorf("output %d: %s %dx%d (%v), %q, url %q", i, format, cfg.Width, cfg.Height, err, o.MediaType, o.URL)
		}
	}
	if bytes.Equal(res.Outputs[0].Data, res.Outputs[1].Data) {
		t.Error("the two images are the same bytes")
	}
	var usage struct {
		TotalTokens *int `json:"total_tokens"`
	}
	if json.Unmarshal(res.Usage, &usage) != nil || usage.TotalTokens == nil {
		t.Errorf("usage %s: want the answer's usage", res.Usage)
	}
	if bytes.Contains(res.Detail, []byte("b64_json")) || len(res.Detail) > 2048 {
		t.Errorf("the detail keeps the payloads (%d bytes): %.200s", len(res.Detail), res.Detail)
	}
	var detail struct {
		Created int64            `json:"created"`
		Data    []map[string]any `json:"data"`
		Size    string           `json:"size"`
	}
	if json.Unmarshal(res.Detail, &detail) != nil || detail.Created != hd.Created || len(detail.Data) != 2 || detail.Size != "1536x1024" {
		t.Errorf("detail %s", res.Detail)
	}
	// The model was sent as the request's target, the rest as it was.
	rep := h.Sim.Jobs()
	var sent map[string]any
	if len(rep.Jobs) != 1 || json.Unmarshal(rep.Jobs[0].Body, &sent) != nil || sent["model"] != "gpt-image-2" || sent["quality"] != "low" || rep.Requests != 1 {
		t.Errorf("sent %s in %d requests", rep.Jobs[0].Body, rep.Requests)
	}
	// The images stay handed over to a second Result.
	if again, err := h.P.Result(ctx, j); h.Keep(err) != nil || len(again.Outputs) != 2 {
		t.Errorf("a second result: %v", err)
	}

	r = request("gpt-image-2.5-flare", map[string]any{"prompt": "a harbour", "output_format": "jpeg"})
	j, err = h.SubmitCtx(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	res, err = h.P.Result(ctx, j)
	if h.Keep(err) != nil || len(res.Outputs) != 1 || res.Outputs[0].MediaType != "image/jpeg" {
		t.Fatalf("a jpeg: %+v, %v", res, err)
	}
}

func TestRefusedForContent(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	ctx := context.Background()
	j, err := h.SubmitCtx(ctx, request("gpt-image-2", map[string]any{"prompt": "a cat " + simkit.RefuseMarker}))
	if err != nil {
		t.Fatalf("a refusal for its content: %v, want a job that ended refused", err)
	}
	st := h.Follow(j)[0]
	if st.State != provider.Failed || !st.Refused || !st.Known || st.Raw != "moderation_blocked" || !strings.Contains(st.Reason, "safety system") {
		t.Fatalf("status %+v", st)
	}
	if _, err := h.P.Result(ctx, j); h.Keep(err) == nil || !strings.Contains(err.Error(), "made no images") {
		t.Errorf("the result of a refused job: %v", err)
	}
	// Another process reads the refusal from the handle.
	other, err := another(h.Harness).Status(ctx, j)
	if h.Keep(err) != nil || !other.Refused || other.Reason != st.Reason {
		t.Errorf("another process: %+v, %v", other, err)
	}
	if rep := h.Sim.Jobs(); len(rep.Jobs) != 0 || rep.Requests != 1 {
		t.Errorf("report %+v: want no job from one request", rep)
	}
}

func TestQuotaSpent(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	_, err := h.SubmitCtx(context.Background(), request("gpt-image-2", map[string]any{"prompt": "x " + simoai.QuotaMarker}))
	if !errors.Is(err, provider.ErrCapReached) || provider.IsPossiblyPaid(err) || !strings.Contains(err.Error(), "insufficient_quota") {
		t.Fatalf("an account out of credit: %v, want the cap reached, not possibly paid", err)
	}
	if se, ok := errors.AsType[*apiclient.Error](err); !ok || se.HTTPStatus != 429 {
		t.Errorf("the cap does not wrap the answer: %v", err)
	}
	if rep := h.Sim.Jobs(); rep.Requests != 1 || len(rep.Jobs) != 0 {
		t.Errorf("report %+v: want one request, not retried", rep)
	}
}

// A failure after the work, a lost answer, a 500 before it and the
// caller's deadline passing during it are all possibly paid, and the
// create is sent once.
func TestPossiblyPaid(t *testing.T) {
	for _, tt := range []struct {
		name   string
		opts   simkit.Options
		prompt string
		ctx    time.Duration
		jobs   int
	}{
		{"failed after the work", simkit.Options{}, "x " + simkit.FailMarker, 0, 1},
		{"answer lost", simkit.Options{LoseRate: 1}, "lost", 0, 1},
		{"500 on create", simkit.Options{ErrorRate: 1}, "five hundred", 0, 0},
		{"deadline during the work", simkit.Options{Latency: 3 * time.Second}, "slow", 300 * time.Millisecond, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, tt.opts, key)
			ctx := context.Background()
			if tt.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctx)
				defer cancel()
			}
			_, err := h.SubmitCtx(ctx, request("gpt-image-2", map[string]any{"prompt": tt.prompt}))
			if !provider.IsPossiblyPaid(err) {
				t.Fatalf("err = %v, want possibly paid", err)
			}
			if rep := h.Sim.Jobs(); rep.Requests != 1 || len(rep.Jobs) != tt.jobs {
				t.Errorf("report %+v: want %d jobs from one request", rep, tt.jobs)
			}
		})
	}
	if _, ok := any(&openai.Provider{}).(provider.Recoverer); ok {
		t.Error("the adapter claims to find lost creates again: the Images API lists nothing")
	}
}

// An answer whose images cannot be read is images made and lost.
func TestUnreadableAnswer(t *testing.T) {
	for _, body := range []string{
		`{"created":1,"data":[]}`,
		`{"created":1,"data":[{"b64_json":"not base64!"}]}`,
		`{"created":1,"data":[{"revised_prompt":"no image"}]}`,
		`{"created":1}`,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(body)) //nolint:errcheck
		}))
		p, err := openai.New(provider.Config{BaseURL: srv.URL, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Submit(context.Background(), request("gpt-image-2", map[string]any{"prompt": "x"}))
		if !provider.IsPossiblyPaid(err) {
			t.Errorf("answer %s: %v, want possibly paid", body, err)
		}
		srv.Close()
	}
}

// An answer with URLs (a DALL·E model's) has outputs to download, and
// its revised prompt is the prompt it reports.
func TestURLOutputs(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n")
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/files/0.png" {
			w.Header().Set("Content-Type", "image/png")
			w.Write(png) //nolint:errcheck
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"created":1700000000,"data":[{"url":"` + srv.URL + `/files/0.png","revised_prompt":"a lighthouse, at dusk"}]}`)) //nolint:errcheck
	}))
	defer srv.Close()
	p, err := openai.New(provider.Config{BaseURL: srv.URL, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	j, err := p.Submit(ctx, request("dall-e-3", map[string]any{"prompt": "a lighthouse"}))
	if err != nil || !strings.HasPrefix(j.ID, "img-1700000000-") {
		t.Fatalf("submit: %+v, %v", j, err)
	}
	res, err := p.Result(ctx, j)
	if err != nil || len(res.Outputs) != 1 || res.Outputs[0].URL != srv.URL+"/files/0.png" || res.Outputs[0].Data != nil || res.Prompt != "a lighthouse, at dusk" {
		t.Fatalf("result %+v, %v", res, err)
	}
	d, err := p.Download(ctx, res.Outputs[0].URL, t.TempDir(), "0")
	if err != nil || d.Size != int64(len(png)) {
		t.Errorf("download: %+v, %v", d, err)
	}
}

// A job of another process: the images it made are lost, and said so;
// one genform never recorded cannot be looked up.
func TestJobOfAnotherProcess(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	ctx := context.Background()
	j, err := h.SubmitCtx(ctx, request("gpt-image-2", map[string]any{"prompt": "made, then the process died", "n": 3}))
	if err != nil {
		t.Fatal(err)
	}
	later := another(h.Harness)
	st, err := later.Status(ctx, j)
	if h.Keep(err) != nil || st.State != provider.Failed || st.Refused || !st.Known || !strings.Contains(st.Reason, "paid for and are lost") {
		t.Fatalf("status in another process: %+v, %v", st, err)
	}
	if _, err := later.Result(ctx, j); h.Keep(err) == nil || !strings.Contains(err.Error(), "no copy") {
		t.Errorf("result in another process: %v", err)
	}
	imported := provider.Job{ID: j.ID, Kind: addrs.Image, Target: "gpt-image-2"}
	if _, err := later.Status(ctx, imported); h.Keep(err) == nil || !strings.Contains(err.Error(), "keeps no jobs") {
		t.Errorf("a job without its record: %v", err)
	}
	if rep := h.Sim.Jobs(); rep.Requests != 1 {
		t.Errorf("following jobs sent %d requests, want none", rep.Requests-1)
	}
}

func TestRateLimitStorm(t *testing.T) {
	h := start(t, simkit.Options{RPM: 1, Now: providertest.StepClock(), Latency: 10 * time.Millisecond}, key)
	h.RateLimitStorm(func() error {
		_, err := h.SubmitCtx(context.Background(), request("gpt-image-2", map[string]any{"prompt": "storm"}))
		return err
	})
}

func TestRefusedBeforeOrAtCreate(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	ctx := context.Background()
	for _, r := range []provider.Request{
		{Kind: addrs.Video, Target: "gpt-image-2", Body: []byte(`{"prompt":"x"}`)},
		{Kind: addrs.Image, Target: "", Body: []byte(`{"prompt":"x"}`)},
		{Kind: addrs.Image, Target: "a/b", Body: []byte(`{"prompt":"x"}`)},
		{Kind: addrs.Image, Target: "gpt-image-2", Body: []byte(`["x"]`)},
		{Kind: addrs.Image, Target: "gpt-image-2", Body: []byte(`{"prompt":"x","model":"gpt-image-1.5"}`)},
		{Kind: addrs.Image, Target: "gpt-image-2", Body: []byte(`{"prompt":"x","stream":true}`)},
	} {
		if _, err := h.SubmitCtx(ctx, r); err == nil || provider.IsPossiblyPaid(err) {
			t.Errorf("%s %q %s: %v, want a refusal before sending", r.Kind, r.Target, r.Body, err)
		}
	}
	if n := h.Sim.Jobs().Requests; n != 0 {
		t.Fatalf("%d requests sent for invalid requests", n)
	}
	// What the API refuses made nothing, and is not a job.
	for _, r := range []provider.Request{
		request("gpt-image-2", map[string]any{"prompt": "x", "size": "1000x1000"}),
		request("gpt-image-1", map[string]any{"prompt": "retired"}),
	} {
		_, err := h.SubmitCtx(ctx, r)
		if se, ok := errors.AsType[*apiclient.Error](err); !ok || provider.IsPossiblyPaid(err) || (se.HTTPStatus != 400 && se.HTTPStatus != 404) {
			t.Errorf("%s %s: %v, want the API's refusal", r.Target, r.Body, err)
		}
	}
	if rep := h.Sim.Jobs(); len(rep.Jobs) != 0 || rep.Requests != 2 {
		t.Errorf("report %+v", rep)
	}
}

func TestCredentials(t *testing.T) {
	good := start(t, simkit.Options{}, key)
	bad := start(t, simkit.Options{}, "sk-wrong-key-abcdefghijkl")
	err := providertest.Keys(good.Harness, bad.Harness, func() error {
		_, err := bad.SubmitCtx(context.Background(), request("gpt-image-2", map[string]any{"prompt": "x"}))
		return err
	})
	if !errors.Is(err, apiclient.ErrUnauthorized) {
		t.Errorf("a create with a refused key: %v, want a refusal of the key", err)
	}
	if p := good.P.ID(); !strings.HasPrefix(p, "openai@http://127.0.0.1:") {
		t.Errorf("the identity of a simulator's adapter is %q", p)
	}
}

// A 403 to a create is a model the organisation must be verified for,
// not the key: it fails that request in OpenAI's words, made nothing, and
// is never taken for a refused key, which would stop every other
// instance. A 403 to the key's check, a list of its own models, is the
// key's (a region not supported, an account refused).
func TestForbiddenModelIsNotTheKey(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	_, err := h.Submit(request("gpt-image-2", map[string]any{"prompt": "x " + simkit.ForbiddenMarker}))
	if err == nil || errors.Is(err, provider.ErrUnauthorized) || provider.IsPossiblyPaid(err) || !strings.Contains(err.Error(), "must be verified") {
		t.Fatalf("a 403 to a create: %v; want a refusal of this request in OpenAI's words", err)
	}
	if n := len(h.Sim.Jobs().Jobs); n != 0 {
		t.Errorf("%d jobs made", n)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"error":{"message":"Country, region, or territory not supported","type":"request_forbidden","param":null,"code":"unsupported_country_region_territory"}}`))
	}))
	defer srv.Close()
	p, err := openai.New(provider.Config{BaseURL: srv.URL, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckCredentials(context.Background()); !errors.Is(err, provider.ErrUnauthorized) {
		t.Errorf("a 403 to the key's check: %v, want a refused key", err)
	}
}

// A request with an image is an edit: POST /v1/images/edits, a multipart
// form whose images are files ("image" for one, "image[]" for a list),
// made from data: URIs and from URLs genform downloads first. A source
// that cannot be had, or is no PNG, JPEG or WebP, is refused before
// anything is sent to OpenAI.
func TestEdits(t *testing.T) {
	h := start(t, simkit.Options{}, key)
	ctx := context.Background()
	var pic bytes.Buffer
	if err := png.Encode(&pic, image.NewGray(image.Rect(0, 0, 16, 16))); err != nil {
		t.Fatal(err)
	}
	dataURI := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pic.Bytes())
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/boat.png" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Write(pic.Bytes())
	}))
	defer files.Close()

	for _, src := range []any{dataURI, []any{dataURI, files.URL + "/boat.png"}} {
		j, err := h.SubmitCtx(ctx, request("gpt-image-2", map[string]any{"prompt": "add a boat", "image": src, "n": 2, "quality": "low"}))
		if err != nil {
			t.Fatalf("an edit of %T: %v", src, err)
		}
		res, err := h.P.Result(ctx, j)
		if h.Keep(err) != nil || len(res.Outputs) != 2 || len(res.Outputs[0].Data) == 0 {
			t.Fatalf("the edit's result: %+v, %v", res, err)
		}
	}
	jobs := h.Sim.Jobs().Jobs
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want the two edits", len(jobs))
	}
	for _, j := range jobs {
		if j.Endpoint != "/v1/images/edits" {
			t.Errorf("job sent to %s, want the edits endpoint", j.Endpoint)
		}
	}

	before := h.Sim.Jobs().Requests
	gif := "data:image/gif;base64," + base64.StdEncoding.EncodeToString([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
	for _, bad := range []any{gif, files.URL + "/missing.png", "ftp://example.com/a.png", []any{}, 7} {
		_, err := h.SubmitCtx(ctx, request("gpt-image-2", map[string]any{"prompt": "p", "image": bad}))
		var se *apiclient.Error
		if err == nil || provider.IsPossiblyPaid(err) || errors.As(err, &se) || !strings.Contains(err.Error(), "nothing was sent to OpenAI") {
			t.Errorf("source %v: %v, want a refusal before anything is sent", bad, err)
		}
	}
	if n := h.Sim.Jobs().Requests - before; n != 0 {
		t.Errorf("%d requests sent for sources that cannot be had", n)
	}
}
