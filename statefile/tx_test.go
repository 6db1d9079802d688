package statefile

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// state is what a test expects to find after an Update: the addresses of
// resources, intents and protections.
type state struct {
	resources, intents, protections []string
}

func snapshotState(t *testing.T, s *Store) state {
	t.Helper()
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var st state
	for a := range snap.Resources {
		st.resources = append(st.resources, a)
	}
	for a := range snap.Intents {
		st.intents = append(st.intents, a)
	}
	for a, on := range snap.Protections {
		if on {
			st.protections = append(st.protections, a)
		}
	}
	return st
}

// seed is the state every table case starts from: image.a (protected) and
// image.b, an intent for video.c.
func seed(t *testing.T) *Store {
	t.Helper()
	s := openNew(t)
	fixedClock(s, t0)
	err := s.Update(func(tx *Tx) error {
		for _, a := range []string{"image.a", "image.b"} {
			if err := tx.PutResource(sampleResource(a, 2)); err != nil {
				return err
			}
		}
		if err := tx.SetProtected("image.a", true); err != nil {
			return err
		}
		return tx.PutIntent(&Intent{Addr: "video.c", Kind: "video"})
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTxWrites(t *testing.T) {
	seeded := state{
		resources:   []string{"image.a", "image.b"},
		intents:     []string{"video.c"},
		protections: []string{"image.a"},
	}
	tests := []struct {
		name    string
		fn      func(tx *Tx) error
		wantErr error  // matched with errors.Is, when set
		errText string // contained in the error, when set
		want    state
	}{
		{
			name: "PutResource adds",
			fn:   func(tx *Tx) error { return tx.PutResource(sampleResource(`image.x["k"]`, 1)) },
			want: state{[]string{"image.a", "image.b", `image.x["k"]`}, seeded.intents, seeded.protections},
		},
		{
			name: "PutResource replaces",
			fn:   func(tx *Tx) error { return tx.PutResource(sampleResource("image.b", 4)) },
			want: seeded,
		},
		{
			name:    "PutResource without address",
			fn:      func(tx *Tx) error { return tx.PutResource(&Resource{Kind: "image"}) },
			errText: "no address",
			want:    seeded,
		},
		{
			name:    "PutResource nil",
			fn:      func(tx *Tx) error { return tx.PutResource(nil) },
			errText: "no address",
			want:    seeded,
		},
		{
			name: "PutResource with a request that is not JSON",
			fn: func(tx *Tx) error {
				r := sampleResource("image.x", 1)
				r.Request = json.RawMessage(`{"prompt":`)
				return tx.PutResource(r)
			},
			errText: "recording image.x: the request is not valid JSON",
			want:    seeded,
		},
		{
			name: "PutResource with a detail that is not JSON",
			fn: func(tx *Tx) error {
				r := sampleResource("image.x", 1)
				r.Detail = json.RawMessage(`nope`)
				return tx.PutResource(r)
			},
			errText: "creation detail is not valid JSON",
			want:    seeded,
		},
		{
			name: "DeleteResource forgets the resource and its protection, not its intent",
			fn: func(tx *Tx) error {
				if err := tx.PutIntent(&Intent{Addr: "image.a"}); err != nil {
					return err
				}
				return tx.DeleteResource("image.a")
			},
			want: state{[]string{"image.b"}, []string{"image.a", "video.c"}, nil},
		},
		{
			name:    "DeleteResource of a missing resource",
			fn:      func(tx *Tx) error { return tx.DeleteResource("image.zz") },
			wantErr: ErrNotFound,
			errText: "resource image.zz: not in the state",
			want:    seeded,
		},
		{
			name: "MoveResource renames and takes the protection along",
			fn:   func(tx *Tx) error { return tx.MoveResource("image.a", "image.renamed") },
			want: state{[]string{"image.b", "image.renamed"}, seeded.intents, []string{"image.renamed"}},
		},
		{
			name:    "MoveResource from a missing address",
			fn:      func(tx *Tx) error { return tx.MoveResource("image.zz", "image.y") },
			wantErr: ErrNotFound,
			errText: "moving resource image.zz",
			want:    seeded,
		},
		{
			name:    "MoveResource onto an existing resource",
			fn:      func(tx *Tx) error { return tx.MoveResource("image.a", "image.b") },
			wantErr: ErrExists,
			errText: "moving resource image.a to image.b",
			want:    seeded,
		},
		{
			name:    "MoveResource onto itself",
			fn:      func(tx *Tx) error { return tx.MoveResource("image.a", "image.a") },
			wantErr: ErrExists,
			want:    seeded,
		},
		{
			name:    "MoveResource to no address",
			fn:      func(tx *Tx) error { return tx.MoveResource("image.a", "") },
			errText: "no destination address",
			want:    seeded,
		},
		{
			name: "PutIntent adds",
			fn:   func(tx *Tx) error { return tx.PutIntent(&Intent{Addr: "image.n", Request: []byte(`{"prompt":"x"}`)}) },
			want: state{seeded.resources, []string{"image.n", "video.c"}, seeded.protections},
		},
		{
			name:    "PutIntent without address",
			fn:      func(tx *Tx) error { return tx.PutIntent(&Intent{Kind: "image"}) },
			errText: "no address",
			want:    seeded,
		},
		{
			name:    "PutIntent with a request that is not JSON",
			fn:      func(tx *Tx) error { return tx.PutIntent(&Intent{Addr: "image.n", Request: []byte(`{`)}) },
			errText: "not valid JSON",
			want:    seeded,
		},
		{
			name: "DeleteIntent removes",
			fn:   func(tx *Tx) error { return tx.DeleteIntent("video.c") },
			want: state{seeded.resources, nil, seeded.protections},
		},
		{
			name: "DeleteIntent of a missing intent does nothing",
			fn:   func(tx *Tx) error { return tx.DeleteIntent("video.zz") },
			want: seeded,
		},
		{
			name: "SetProtected on",
			fn:   func(tx *Tx) error { return tx.SetProtected("image.b", true) },
			want: state{seeded.resources, seeded.intents, []string{"image.a", "image.b"}},
		},
		{
			name: "SetProtected off",
			fn:   func(tx *Tx) error { return tx.SetProtected("image.a", false) },
			want: state{seeded.resources, seeded.intents, nil},
		},
		{
			name:    "SetProtected without address",
			fn:      func(tx *Tx) error { return tx.SetProtected("", true) },
			errText: "no address",
			want:    seeded,
		},
		{
			name: "several writes in one Update are kept together",
			fn: func(tx *Tx) error {
				if err := tx.DeleteResource("image.b"); err != nil {
					return err
				}
				return tx.MoveResource("image.a", "image.zz2")
			},
			want: state{[]string{"image.zz2"}, seeded.intents, []string{"image.zz2"}},
		},
		{
			name: "a failed step rolls back the whole Update",
			fn: func(tx *Tx) error {
				if err := tx.DeleteResource("image.b"); err != nil {
					return err
				}
				return tx.MoveResource("image.missing", "image.y")
			},
			wantErr: ErrNotFound,
			want:    seeded,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := seed(t)
			err := s.Update(tt.fn)
			wantErr := tt.wantErr != nil || tt.errText != ""
			if (err != nil) != wantErr {
				t.Fatalf("Update error = %v, want error %v", err, wantErr)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %q does not match %v", err, tt.wantErr)
			}
			if tt.errText != "" && !strings.Contains(err.Error(), tt.errText) {
				t.Errorf("error %q does not contain %q", err, tt.errText)
			}
			got := snapshotState(t, reopen(t, s))
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(state{}), cmpSorted); diff != "" {
				t.Errorf("state after Update (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTxReads(t *testing.T) {
	s := seed(t)
	err := s.Update(func(tx *Tx) error {
		t.Run("Resource sees the transaction's own writes", func(t *testing.T) {
			r := sampleResource("image.new", 1)
			if err := tx.PutResource(r); err != nil {
				t.Fatal(err)
			}
			got, err := tx.Resource("image.new")
			if err != nil || got == nil || got.Fingerprint != r.Fingerprint {
				t.Errorf("Resource(image.new) = %+v, %v", got, err)
			}
		})
		t.Run("Resource of a missing address", func(t *testing.T) {
			if got, err := tx.Resource("image.none"); got != nil || err != nil {
				t.Errorf("Resource = %v, %v; want nil, nil", got, err)
			}
		})
		t.Run("Intent", func(t *testing.T) {
			got, err := tx.Intent("video.c")
			if err != nil || got == nil || got.Kind != "video" {
				t.Errorf("Intent(video.c) = %+v, %v", got, err)
			}
			if got, err := tx.Intent("video.none"); got != nil || err != nil {
				t.Errorf("Intent(missing) = %v, %v; want nil, nil", got, err)
			}
		})
		t.Run("Protected", func(t *testing.T) {
			for addr, want := range map[string]bool{"image.a": true, "image.b": false, "image.none": false} {
				got, err := tx.Protected(addr)
				if err != nil || got != want {
					t.Errorf("Protected(%s) = %v, %v; want %v", addr, got, err, want)
				}
			}
		})
		t.Run("Meta", func(t *testing.T) {
			m, err := tx.Meta()
			if err != nil || m.Serial != 1 {
				t.Errorf("Meta = %+v, %v; want serial 1 (before this commit)", m, err)
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestTimestamps(t *testing.T) {
	s := openNew(t)
	fixedClock(s, t0)
	put := func(r *Resource) {
		t.Helper()
		if err := s.Update(func(tx *Tx) error { return tx.PutResource(r) }); err != nil {
			t.Fatal(err)
		}
	}
	get := func(addr string) *Resource {
		t.Helper()
		r, err := s.Resource(addr)
		if err != nil || r == nil {
			t.Fatalf("Resource(%s) = %v, %v", addr, r, err)
		}
		return r
	}
	put(&Resource{Addr: "image.a"})
	if r := get("image.a"); !r.CreatedAt.Equal(t0) || !r.UpdatedAt.Equal(t0) {
		t.Errorf("new record: created %v updated %v, want both %v", r.CreatedAt, r.UpdatedAt, t0)
	}

	t1 := t0.Add(time.Hour)
	fixedClock(s, t1)
	put(&Resource{Addr: "image.a", Status: "succeed"})
	if r := get("image.a"); !r.CreatedAt.Equal(t0) || !r.UpdatedAt.Equal(t1) {
		t.Errorf("replaced record: created %v updated %v, want %v and %v", r.CreatedAt, r.UpdatedAt, t0, t1)
	}

	t2 := t1.Add(time.Hour)
	fixedClock(s, t2)
	if err := s.Update(func(tx *Tx) error { return tx.MoveResource("image.a", "image.b") }); err != nil {
		t.Fatal(err)
	}
	if r := get("image.b"); !r.CreatedAt.Equal(t0) || !r.UpdatedAt.Equal(t2) || r.Status != "succeed" {
		t.Errorf("moved record: %+v", r)
	}

	err := s.Update(func(tx *Tx) error {
		if err := tx.PutIntent(&Intent{Addr: "image.c"}); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fixedClock(s, t2.Add(time.Minute))
	err = s.Update(func(tx *Tx) error {
		return tx.PutIntent(&Intent{Addr: "image.c", GenerationID: "gen-1"})
	})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	in := snap.Intents["image.c"]
	if !in.CreatedAt.Equal(t2) || !in.SubmittedAt.Equal(t2.Add(time.Minute)) {
		t.Errorf("intent: created %v submitted %v, want %v and %v", in.CreatedAt, in.SubmittedAt, t2, t2.Add(time.Minute))
	}
}
