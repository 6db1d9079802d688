package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider/reference"
	"github.com/genform/genform/internal/simulator"
	"github.com/genform/genform/reconcile"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// simDir is a working directory with a configuration, a state file and a
// client of a real simulator: what genform import works with.
type simDir struct {
	stateDir
	client *reference.Client
}

func newSimDir(t *testing.T, src string, latency time.Duration) *simDir {
	t.Helper()
	srv, err := simulator.New(simulator.Options{Latency: latency, Token: "tok", RPM: -1, MaxConcurrent: -1})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	client, err := apiclient.New(apiclient.Config{BaseURL: hs.URL, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	d := &simDir{stateDir: stateDir{t: t, dir: t.TempDir()}, client: reference.NewClient(client)}
	d.cfg = (&fixture{t: t, dir: d.dir}).write(src)
	d.store = openState(t, d.dir, d.cfg.Settings.StateFile)
	return d
}

// create makes a job on the simulator, as someone outside genform would,
// and with wait set, waits for it to end.
func (d *simDir) create(endpoint addrs.Endpoint, body []byte, wait bool) string {
	d.t.Helper()
	ctx := context.Background()
	id, err := d.client.Create(ctx, endpoint, body)
	if err != nil {
		d.t.Fatal(err)
	}
	for wait {
		st, err := d.client.Status(ctx, id)
		if err != nil {
			d.t.Fatal(err)
		}
		if st.State != reference.StateRunning {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return id
}

func (d *simDir) importInto(addr, id string) (*ImportResult, error) {
	return Import(context.Background(), ImportInput{
		Instance: d.instance(addr), CreationID: id, Store: d.store, Service: reference.New(d.client.Client, "simulator"), ServiceID: "simulator", Dir: d.dir,
	})
}

func (d *simDir) plan() *plans.Plan {
	d.t.Helper()
	p, diags := reconcile.MakePlan(reconcile.PlanInput{Config: d.cfg, State: d.snapshot(), Service: "simulator", Refresh: true, Dir: d.dir})
	if diags.HasErrors() {
		d.t.Fatal(diags)
	}
	return p
}

const importConfig = `
image "boat" {
  prompt       = "a paper boat"
  image_number = 2
}
video "waves" {
  prompt = "waves"
}
video "sail" {
  source_image = image.boat.outputs[0].media_url
  prompt       = "the boat sails"
}
`

// TestImportAdopts checks the story import exists for: a creation made
// elsewhere with the declared request becomes the instance's, its files are
// on disk with the recorded hashes, and the next plan has nothing to do for
// it (nor does it propose the creation again).
func TestImportAdopts(t *testing.T) {
	d := newSimDir(t, importConfig, 10*time.Millisecond)
	boat := d.instance("image.boat")
	id := d.create(boat.Endpoint, boat.Request, true)
	// An apply interrupted before it recorded the answer left an intent.
	if err := d.store.Update(func(tx *statefile.Tx) error {
		return tx.RecordIntent(&statefile.Intent{Addr: a("image.boat"), Endpoint: boat.Endpoint, Request: boat.Request})
	}); err != nil {
		t.Fatal(err)
	}

	res, err := d.importInto("image.boat", id)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) > 0 {
		t.Errorf("warnings for a creation of the declared request: %+v", res.Warnings)
	}
	snap := d.snapshot()
	rec := snap.Resources[a("image.boat")]
	if rec == nil || rec.CreationID != id || rec.Status != plans.StatusSucceed {
		t.Fatalf("recorded %+v", rec)
	}
	if snap.Intents[a("image.boat")] != nil {
		t.Error("the interrupted submission's intent is still there")
	}
	if len(rec.Outputs) != 2 {
		t.Fatalf("recorded %d outputs, want 2", len(rec.Outputs))
	}
	for _, o := range rec.Outputs {
		b, err := os.ReadFile(filepath.Join(d.dir, o.Path))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != o.SHA256 || !strings.HasPrefix(o.Path, "generated/image/boat/") {
			t.Errorf("output %d at %s: recorded sha256 %s does not match the file", o.Index, o.Path, o.SHA256)
		}
	}
	p := d.plan()
	if c := p.Change(a("image.boat")); c == nil || c.Action != plans.NoOp {
		t.Errorf("after import, plan for image.boat = %+v, want no-op", c)
	}
	// What is made from the imported image now sees its outputs.
	if c := p.Change(a("video.sail")); c == nil || c.Action != plans.Create || c.Fingerprint == "" {
		t.Errorf("video.sail: %+v, want a create with a known request", c)
	}
}

// TestImportRefuses checks every refusal leaves the state and the disk as
// they were, with a message saying why.
func TestImportRefuses(t *testing.T) {
	tests := []struct {
		name    string
		latency time.Duration
		addr    string
		setup   func(d *simDir) string // returns the creation id
		wantErr string
	}{
		{
			name: "already managed", latency: 10 * time.Millisecond, addr: "image.boat",
			setup: func(d *simDir) string {
				boat := d.instance("image.boat")
				first := d.create(boat.Endpoint, boat.Request, true)
				if _, err := d.importInto("image.boat", first); err != nil {
					d.t.Fatal(err)
				}
				return d.create(boat.Endpoint, boat.Request, true)
			},
			wantErr: "already managed",
		},
		{
			name: "failed creation", latency: 10 * time.Millisecond, addr: "image.boat",
			setup: func(d *simDir) string {
				return d.create(addrs.Text2Image, []byte(`{"prompt":"[fail] a boat","config":{"image_number":2}}`), true)
			},
			wantErr: "failed on the service",
		},
		{
			name: "still running", latency: time.Hour, addr: "image.boat",
			setup: func(d *simDir) string {
				boat := d.instance("image.boat")
				return d.create(boat.Endpoint, boat.Request, false)
			},
			wantErr: "not succeed",
		},
		{
			name: "other kind", latency: 10 * time.Millisecond, addr: "video.waves",
			setup: func(d *simDir) string {
				boat := d.instance("image.boat")
				return d.create(boat.Endpoint, boat.Request, true)
			},
			wantErr: "is an image, but video.waves is declared as a video",
		},
		{
			name: "request not known", latency: 10 * time.Millisecond, addr: "video.sail",
			setup: func(d *simDir) string {
				waves := d.instance("video.waves")
				return d.create(waves.Endpoint, waves.Request, true)
			},
			wantErr: "known only after apply",
		},
		{
			name: "no such creation", latency: 10 * time.Millisecond, addr: "image.boat",
			setup:   func(d *simDir) string { return "no-such-creation" },
			wantErr: "no-such-creation",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newSimDir(t, importConfig, tt.latency)
			id := tt.setup(d)
			before := d.snapshot()
			beforeFiles := listFiles(t, filepath.Join(d.dir, "generated"))
			_, err := d.importInto(tt.addr, id)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("import %s %s: error %v, want one containing %q", tt.addr, id, err, tt.wantErr)
			}
			after := d.snapshot()
			if after.Meta.Serial != before.Meta.Serial {
				t.Errorf("the state changed (serial %d -> %d)", before.Meta.Serial, after.Meta.Serial)
			}
			if got := listFiles(t, filepath.Join(d.dir, "generated")); strings.Join(got, ",") != strings.Join(beforeFiles, ",") {
				t.Errorf("files changed: %q -> %q", beforeFiles, got)
			}
		})
	}
}

// TestImportWarnsOnDifferences checks that a creation unlike the
// declaration is adopted with a warning rather than silently: the plan
// will not show the difference, since the declaration is what is recorded.
func TestImportWarnsOnDifferences(t *testing.T) {
	d := newSimDir(t, importConfig, 10*time.Millisecond)
	id := d.create(addrs.Text2Image, []byte(`{"prompt":"a stone boat","config":{"image_number":1}}`), true)
	res, err := d.importInto("image.boat", id)
	if err != nil {
		t.Fatal(err)
	}
	want := []ImportWarning{
		{Kind: PromptDiffers, Got: "a stone boat", Want: "a paper boat"},
		{Kind: ImageCountDiffers, GotN: 1, WantN: 2},
	}
	if diff := cmp.Diff(want, res.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

func listFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	return files
}
