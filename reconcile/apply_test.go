package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/genform/genform/config/addrs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/genform/genform/service"
	"github.com/genform/genform/statefile"
)

// fakeService answers as a scripted service would: createErr decides what
// a create request gets; every job succeeds at the first poll.
type fakeService struct {
	mu        sync.Mutex
	creates   int
	createErr error
	polls     int
}

func (f *fakeService) Create(ctx context.Context, endpoint addrs.Endpoint, body []byte) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.creates++
	if f.createErr != nil {
		return "", f.createErr
	}
	return fmt.Sprintf("job-%d", f.creates), nil
}

func (f *fakeService) Status(ctx context.Context, id string) (service.Status, error) {
	f.mu.Lock()
	f.polls++
	f.mu.Unlock()
	return service.Status{Raw: "succeed", State: service.StateDone, Known: true, Progress: 1}, nil
}

func (f *fakeService) Detail(ctx context.Context, id string) (*service.Creation, error) {
	return &service.Creation{CreationID: id, Status: "succeed", Raw: []byte(`{"creation_id":"` + id + `"}`),
		Outputs: []service.CreationOutput{{ID: id + "-0", MediaURL: "http://127.0.0.1/m/" + id}}}, nil
}

func (f *fakeService) WatermarkFreeURL(ctx context.Context, id string) (*service.WatermarkFreeURL, error) {
	return &service.WatermarkFreeURL{URL: "http://127.0.0.1/nowm/" + id}, nil
}

func (f *fakeService) Download(ctx context.Context, url, dir, base string) (*service.Downloaded, error) {
	data := []byte("content of " + url)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, base+".png")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	return &service.Downloaded{Path: path, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), ContentType: "image/png"}, nil
}

// applyWith plans src in a fresh directory and applies it with svc.
func applyWith(t *testing.T, src string, svc Service) (*statefile.Store, *Result, string) {
	t.Helper()
	f := newFixture(t)
	cfg := f.write(src)
	st, err := statefile.Open(filepath.Join(f.dir, ".genform", "state.db"), statefile.Options{Create: true, Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	snap, _ := st.Snapshot()
	p, diags := MakePlan(PlanInput{Config: cfg, State: snap, Service: "simulator", Refresh: true, Dir: f.dir})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	eng := &Engine{Config: cfg, Store: st, Service: svc, ServiceID: "simulator", Parallelism: 2, Dir: f.dir}
	res, err := eng.Apply(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return st, res, f.dir
}

const oneImage = `
image "a" {
  prompt       = "a red apple"
  image_number = 1
}
`

// TestApplyCreateAnswers checks the write-ahead rule on each kind of answer
// to a create request: an id is recorded before polling; a refusal leaves
// nothing behind; an ambiguous failure keeps the intent so the next plan
// warns instead of silently paying again.
func TestApplyCreateAnswers(t *testing.T) {
	t.Run("success records the outputs and clears the intent", func(t *testing.T) {
		svc := &fakeService{}
		st, res, dir := applyWith(t, oneImage, svc)
		snap, _ := st.Snapshot()
		rec := snap.Resources[a("image.a")]
		if len(res.Generated) != 1 || rec == nil || rec.CreationID != "job-1" || len(snap.Intents) != 0 {
			t.Fatalf("result %+v, record %+v, intents %v", res, rec, snap.Intents)
		}
		if _, err := os.Stat(filepath.Join(dir, rec.Outputs[0].Path)); err != nil {
			t.Errorf("output not on disk: %v", err)
		}
	})
	t.Run("refusal clears the intent", func(t *testing.T) {
		svc := &fakeService{createErr: &service.Error{HTTPStatus: 400, Message: "prompt too long", Op: "POST /v1/jobs/text2image"}}
		st, res, _ := applyWith(t, oneImage, svc)
		snap, _ := st.Snapshot()
		if len(res.Failed) != 1 || len(snap.Intents) != 0 || len(snap.Resources) != 0 {
			t.Fatalf("failed %v, intents %v, resources %v", res.Failed, snap.Intents, snap.Resources)
		}
	})
	t.Run("ambiguous failure keeps the intent", func(t *testing.T) {
		svc := &fakeService{createErr: fmt.Errorf("reading the answer: %w", service.ErrAmbiguousCreate)}
		st, res, dir := applyWith(t, oneImage, svc)
		snap, _ := st.Snapshot()
		it := snap.Intents[a("image.a")]
		if len(res.Failed) != 1 || it == nil || it.GenerationID != "" {
			t.Fatalf("failed %v, intent %+v", res.Failed, it)
		}
		cfg := (&fixture{t: t, dir: dir}).write(oneImage)
		p, _ := MakePlan(PlanInput{Config: cfg, State: snap, Service: "simulator", Dir: dir})
		if c := p.Change(a("image.a")); c.Action != Create || c.Reason.Code != ReasonAnswerLost || !c.Reason.MayHaveBeenPaid() {
			t.Errorf("next plan: %s %+v", c.Action, c.Reason)
		}
		if !errors.Is(res.Failed[0].Err, service.ErrAmbiguousCreate) {
			t.Errorf("the failure should say the create was ambiguous: %v", res.Failed[0].Err)
		}
	})
}

// TestApplyRefusesARequestThePlanDidNotShow: when what the plan showed and
// what would be sent differ (a file read by file() changed after plan
// -out), nothing is submitted.
func TestApplyRefusesARequestThePlanDidNotShow(t *testing.T) {
	f := newFixture(t)
	cfg := f.write(oneImage)
	st, err := statefile.Open(filepath.Join(f.dir, ".genform", "state.db"), statefile.Options{Create: true, Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, _ := MakePlan(PlanInput{Config: cfg, State: nil, Service: "simulator", Dir: f.dir})
	p.Change(a("image.a")).Fingerprint = "not-the-request-that-will-be-sent"
	svc := &fakeService{}
	res, err := (&Engine{Config: cfg, Store: st, Service: svc, ServiceID: "simulator", Parallelism: 1, Dir: f.dir}).Apply(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if svc.creates != 0 || len(res.Failed) != 1 {
		t.Fatalf("creates %d, failed %v", svc.creates, res.Failed)
	}
	snap, _ := st.Snapshot()
	if len(snap.Intents) != 0 || len(snap.Resources) != 0 {
		t.Errorf("state changed: %v %v", snap.Intents, snap.Resources)
	}
}
