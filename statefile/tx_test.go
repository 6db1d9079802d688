package statefile

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/genform/genform/internal/addrs"
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
	for addr := range snap.Resources {
		st.resources = append(st.resources, addr.String())
	}
	for addr := range snap.Intents {
		st.intents = append(st.intents, addr.String())
	}
	for addr, on := range snap.Protections {
		if on {
			st.protections = append(st.protections, addr.String())
		}
	}
	return st
}

// seed is the state every table case starts from:
//   - image.a has a record, prevent_destroy and an intent (a replacement
//     submitted as job gen-a2);
//   - image.b has a record;
//   - image.c has only an intent, of job gen-c: an apply was killed after
//     submitting it;
//   - video.d has only an intent, without a job: an apply was killed
//     before the service answered.
func seed(t *testing.T) *Store {
	t.Helper()
	s := openNew(t)
	fixedClock(s, t0)
	err := s.Update(func(tx *Tx) error {
		for _, addr := range []string{"image.a", "image.b"} {
			if err := tx.Record(sampleResource(addr, 2)); err != nil {
				return err
			}
		}
		if err := tx.Protect(a("image.a"), true); err != nil {
			return err
		}
		for _, in := range []*Intent{intent("image.a", "gen-a2"), intent("image.c", "gen-c"), intent("video.d", "")} {
			if err := tx.RecordIntent(in); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var seeded = state{
	resources:   []string{"image.a", "image.b"},
	intents:     []string{"image.a", "image.c", "video.d"},
	protections: []string{"image.a"},
}

// move moves the record of src to dst as a caller of Move does: it reads
// the record, updates its address and directory (the caller moves the
// files), and gives it to Move. A src without a record moves a new one.
func move(tx *Tx, src, dst string) error {
	r, err := tx.Resource(a(src))
	if err != nil {
		return err
	}
	if r == nil {
		r = sampleResource(dst, 1)
	}
	r.Addr = a(dst)
	r.Dir = "generated/" + dst
	for i := range r.Outputs {
		r.Outputs[i].Path = fmt.Sprintf("%s/%d.png", r.Dir, i)
	}
	return tx.Move(a(src), r)
}

func forget(tx *Tx, addr string) error {
	_, err := tx.Forget(a(addr))
	return err
}

func TestTxWrites(t *testing.T) {
	tests := []struct {
		name    string
		fn      func(tx *Tx) error
		wantErr error  // matched with errors.Is, when set
		errText string // contained in the error, when set
		want    state
		// noop says the Update changes nothing, so the serial stays; it
		// goes up by one after every other Update that succeeds.
		noop bool
	}{
		{
			name: "Record adds",
			fn:   func(tx *Tx) error { return tx.Record(sampleResource(`image.x["k"]`, 1)) },
			want: state{[]string{"image.a", "image.b", `image.x["k"]`}, seeded.intents, seeded.protections},
		},
		{
			name: "Record replaces",
			fn:   func(tx *Tx) error { return tx.Record(sampleResource("image.b", 4)) },
			want: seeded,
		},
		{
			name: "Record clears the intent at its address and keeps its protection",
			fn:   func(tx *Tx) error { return tx.Record(sampleResource("image.a", 4)) },
			want: state{seeded.resources, []string{"image.c", "video.d"}, seeded.protections},
		},
		{
			name: "Record of an address with only an intent clears it",
			fn:   func(tx *Tx) error { return tx.Record(sampleResource("video.d", 1)) },
			want: state{[]string{"image.a", "image.b", "video.d"}, []string{"image.a", "image.c"}, seeded.protections},
		},
		{
			name:    "Record without address",
			fn:      func(tx *Tx) error { return tx.Record(&Resource{Endpoint: addrs.Text2Image}) },
			errText: "no address",
			want:    seeded,
		},
		{
			name:    "Record nil",
			fn:      func(tx *Tx) error { return tx.Record(nil) },
			errText: "no address",
			want:    seeded,
		},
		{
			name: "Record with a request that is not JSON",
			fn: func(tx *Tx) error {
				r := sampleResource("image.c", 1)
				r.Request = json.RawMessage(`{"prompt":`)
				return tx.Record(r)
			},
			errText: "recording image.c: the request is not valid JSON",
			want:    seeded,
		},
		{
			name: "Record with a detail that is not JSON",
			fn: func(tx *Tx) error {
				r := sampleResource("image.c", 1)
				r.Detail = json.RawMessage(`nope`)
				return tx.Record(r)
			},
			errText: "creation detail is not valid JSON",
			want:    seeded,
		},
		{
			name: "RecordIntent adds",
			fn: func(tx *Tx) error {
				return tx.RecordIntent(&Intent{Addr: a("image.n"), Endpoint: addrs.Text2Image, Request: []byte(`{"prompt":"x"}`)})
			},
			want: state{seeded.resources, []string{"image.a", "image.c", "image.n", "video.d"}, seeded.protections},
		},
		{
			name: "RecordIntent beside a record keeps the record",
			fn:   func(tx *Tx) error { return tx.RecordIntent(intent("image.b", "")) },
			want: state{seeded.resources, []string{"image.a", "image.b", "image.c", "video.d"}, seeded.protections},
		},
		{
			name: "RecordIntent replaces",
			fn:   func(tx *Tx) error { return tx.RecordIntent(intent("video.d", "gen-d")) },
			want: seeded,
		},
		{
			name:    "RecordIntent without address",
			fn:      func(tx *Tx) error { return tx.RecordIntent(&Intent{Endpoint: addrs.Text2Image}) },
			errText: "no address",
			want:    seeded,
		},
		{
			name:    "RecordIntent nil",
			fn:      func(tx *Tx) error { return tx.RecordIntent(nil) },
			errText: "no address",
			want:    seeded,
		},
		{
			name: "RecordIntent with a request that is not JSON",
			fn: func(tx *Tx) error {
				return tx.RecordIntent(&Intent{Addr: a("image.n"), Endpoint: addrs.Text2Image, Request: []byte(`{`)})
			},
			errText: "not valid JSON",
			want:    seeded,
		},
		{
			name: "ClearIntent removes",
			fn:   func(tx *Tx) error { return tx.ClearIntent(a("image.c")) },
			want: state{seeded.resources, []string{"image.a", "video.d"}, seeded.protections},
		},
		{
			name: "ClearIntent keeps the record and protection",
			fn:   func(tx *Tx) error { return tx.ClearIntent(a("image.a")) },
			want: state{seeded.resources, []string{"image.c", "video.d"}, seeded.protections},
		},
		{
			name: "ClearIntent of a missing intent does nothing",
			fn:   func(tx *Tx) error { return tx.ClearIntent(a("image.b")) },
			want: seeded,
			noop: true,
		},
		{
			name: "Protect on",
			fn:   func(tx *Tx) error { return tx.Protect(a("image.b"), true) },
			want: state{seeded.resources, seeded.intents, []string{"image.a", "image.b"}},
		},
		{
			name: "Protect an address without a record",
			fn:   func(tx *Tx) error { return tx.Protect(a(`video.e["x"]`), true) },
			want: state{seeded.resources, seeded.intents, []string{"image.a", `video.e["x"]`}},
		},
		{
			name: "Protect off",
			fn:   func(tx *Tx) error { return tx.Protect(a("image.a"), false) },
			want: state{seeded.resources, seeded.intents, nil},
		},
		{
			name: "Protect on when on changes nothing",
			fn:   func(tx *Tx) error { return tx.Protect(a("image.a"), true) },
			want: seeded,
			noop: true,
		},
		{
			name: "Protect off when off changes nothing",
			fn:   func(tx *Tx) error { return tx.Protect(a("image.b"), false) },
			want: seeded,
			noop: true,
		},
		{
			name: "Protect twice in one Update counts once",
			fn: func(tx *Tx) error {
				if err := tx.Protect(a("image.b"), true); err != nil {
					return err
				}
				return tx.Protect(a("image.b"), true)
			},
			want: state{seeded.resources, seeded.intents, []string{"image.a", "image.b"}},
		},
		{
			name:    "Protect without address",
			fn:      func(tx *Tx) error { return tx.Protect(addrs.Instance{}, true) },
			errText: "no address",
			want:    seeded,
		},
		{
			name: "Forget removes the record, intent and protection",
			fn:   func(tx *Tx) error { return forget(tx, "image.a") },
			want: state{[]string{"image.b"}, []string{"image.c", "video.d"}, nil},
		},
		{
			name: "Forget of an address with only an intent",
			fn:   func(tx *Tx) error { return forget(tx, "image.c") },
			want: state{seeded.resources, []string{"image.a", "video.d"}, seeded.protections},
		},
		{
			name: "Forget of a missing address does nothing",
			fn:   func(tx *Tx) error { return forget(tx, "image.zz") },
			want: seeded,
			noop: true,
		},
		{
			name: "Move renames and takes the protection along; the intent at the source stays",
			fn:   func(tx *Tx) error { return move(tx, "image.a", "image.renamed") },
			want: state{[]string{"image.b", "image.renamed"}, seeded.intents, []string{"image.renamed"}},
		},
		{
			name: "Move of an unprotected resource",
			fn:   func(tx *Tx) error { return move(tx, "image.b", `image.b[0]`) },
			want: state{[]string{"image.a", `image.b[0]`}, seeded.intents, seeded.protections},
		},
		{
			name: "Move onto itself records the resource as given",
			fn:   func(tx *Tx) error { return move(tx, "image.a", "image.a") },
			want: seeded,
		},
		{
			name:    "Move from a missing address",
			fn:      func(tx *Tx) error { return move(tx, "image.zz", "image.y") },
			wantErr: ErrNotFound,
			errText: "moving resource image.zz",
			want:    seeded,
		},
		{
			name:    "Move from an address with only an intent",
			fn:      func(tx *Tx) error { return move(tx, "image.c", "image.y") },
			wantErr: ErrNotFound,
			errText: "moving resource image.c",
			want:    seeded,
		},
		{
			name:    "Move onto an existing resource",
			fn:      func(tx *Tx) error { return move(tx, "image.a", "image.b") },
			wantErr: ErrExists,
			errText: "moving resource image.a to image.b",
			want:    seeded,
		},
		{
			name:    "Move onto an unfinished submission",
			fn:      func(tx *Tx) error { return move(tx, "image.b", "image.c") },
			wantErr: ErrExists,
			errText: "moving resource image.b to image.c: an unfinished submission of image.c",
			want:    seeded,
		},
		{
			name:    "Move onto a resource that also has an intent",
			fn:      func(tx *Tx) error { return move(tx, "image.b", "image.a") },
			wantErr: ErrExists,
			want:    seeded,
		},
		{
			name:    "Move to no address",
			fn:      func(tx *Tx) error { return tx.Move(a("image.a"), &Resource{Endpoint: addrs.Text2Image}) },
			errText: "no destination address",
			want:    seeded,
		},
		{
			name:    "Move of no record",
			fn:      func(tx *Tx) error { return tx.Move(a("image.a"), nil) },
			errText: "no destination address",
			want:    seeded,
		},
		{
			name: "several writes in one Update are kept together",
			fn: func(tx *Tx) error {
				if err := forget(tx, "image.b"); err != nil {
					return err
				}
				return move(tx, "image.a", "image.zz2")
			},
			want: state{[]string{"image.zz2"}, seeded.intents, []string{"image.zz2"}},
		},
		{
			name: "a failed step rolls back the whole Update",
			fn: func(tx *Tx) error {
				if err := forget(tx, "image.b"); err != nil {
					return err
				}
				return move(tx, "image.missing", "image.y")
			},
			wantErr: ErrNotFound,
			want:    seeded,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := seed(t)
			before := serial(t, s)
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
			s = reopen(t, s)
			got := snapshotState(t, s)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(state{}), cmpSorted); diff != "" {
				t.Errorf("state after Update (-want +got):\n%s", diff)
			}
			want := before + 1
			if wantErr || tt.noop {
				want = before
			}
			if got := serial(t, s); got != want {
				t.Errorf("serial %d after Update, want %d", got, want)
			}
		})
	}
}

// TestForget checks what Forget reports and removes. Forget is what
// genform state rm and destroy use, and what apply uses for a block
// removed from the configuration: it must work on whatever an interrupted
// apply or a damaged file left at an address.
func TestForget(t *testing.T) {
	garbage := []byte{0x08, 0x01, 0x12, 0xff}
	tests := []struct {
		name    string
		prepare func(t *testing.T, s *Store) // after seed, before Forget
		addr    string
		want    Forgotten
		state   state
		noop    bool
	}{
		{
			name:  "a record, an intent and a protection",
			addr:  "image.a",
			want:  Forgotten{Record: true, Intent: true, GenerationID: "gen-a2"},
			state: state{[]string{"image.b"}, []string{"image.c", "video.d"}, nil},
		},
		{
			name:  "a record only",
			addr:  "image.b",
			want:  Forgotten{Record: true},
			state: state{[]string{"image.a"}, seeded.intents, seeded.protections},
		},
		{
			// An apply killed after submitting image.c, whose block was
			// then removed: apply and destroy must be able to forget it.
			name:  "only an intent, of a submitted job",
			addr:  "image.c",
			want:  Forgotten{Intent: true, GenerationID: "gen-c"},
			state: state{seeded.resources, []string{"image.a", "video.d"}, seeded.protections},
		},
		{
			name:  "only an intent, before the service answered",
			addr:  "video.d",
			want:  Forgotten{Intent: true},
			state: state{seeded.resources, []string{"image.a", "image.c"}, seeded.protections},
		},
		{
			name: "only a protection",
			prepare: func(t *testing.T, s *Store) {
				if err := s.Update(func(tx *Tx) error { return tx.Protect(a("image.p"), true) }); err != nil {
					t.Fatal(err)
				}
			},
			addr:  "image.p",
			want:  Forgotten{},
			state: seeded,
		},
		{
			name:  "nothing",
			addr:  `image.a["a"]`,
			want:  Forgotten{},
			state: seeded,
			noop:  true,
		},
		{
			name:    "a damaged record",
			prepare: func(t *testing.T, s *Store) { rawPut(t, s, bucketResources, "image.b", garbage) },
			addr:    "image.b",
			want:    Forgotten{Record: true},
			state:   state{[]string{"image.a"}, seeded.intents, seeded.protections},
		},
		{
			name: "a record of the wrong kind, with its intent",
			prepare: func(t *testing.T, s *Store) {
				rawPut(t, s, bucketResources, "image.a", tamper(encodeResource(sampleResource("image.a", 1)), resKind, "video"))
			},
			addr:  "image.a",
			want:  Forgotten{Record: true, Intent: true, GenerationID: "gen-a2"},
			state: state{[]string{"image.b"}, []string{"image.c", "video.d"}, nil},
		},
		{
			name:    "a damaged intent",
			prepare: func(t *testing.T, s *Store) { rawPut(t, s, bucketIntents, "image.c", garbage) },
			addr:    "image.c",
			want:    Forgotten{Intent: true},
			state:   state{seeded.resources, []string{"image.a", "video.d"}, seeded.protections},
		},
		{
			name:    "a damaged protection",
			prepare: func(t *testing.T, s *Store) { rawPut(t, s, bucketProtections, "image.a", garbage) },
			addr:    "image.a",
			want:    Forgotten{Record: true, Intent: true, GenerationID: "gen-a2"},
			state:   state{[]string{"image.b"}, []string{"image.c", "video.d"}, nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := seed(t)
			if tt.prepare != nil {
				tt.prepare(t, s)
			}
			before := serial(t, s)
			var got Forgotten
			err := s.Update(func(tx *Tx) error {
				var err error
				got, err = tx.Forget(a(tt.addr))
				return err
			})
			if err != nil {
				t.Fatalf("Forget(%s): %v", tt.addr, err)
			}
			if got != tt.want {
				t.Errorf("Forget(%s) = %+v, want %+v", tt.addr, got, tt.want)
			}
			s = reopen(t, s)
			if diff := cmp.Diff(tt.state, snapshotState(t, s), cmp.AllowUnexported(state{}), cmpSorted); diff != "" {
				t.Errorf("state after Forget (-want +got):\n%s", diff)
			}
			if err := s.Check(); err != nil {
				t.Errorf("Check after Forget: %v", err)
			}
			want := before + 1
			if tt.noop {
				want = before
			}
			if got := serial(t, s); got != want {
				t.Errorf("serial %d after Forget, want %d", got, want)
			}
			// Forgetting again finds nothing and changes nothing.
			err = s.Update(func(tx *Tx) error {
				var err error
				got, err = tx.Forget(a(tt.addr))
				return err
			})
			if err != nil || got != (Forgotten{}) || serial(t, s) != want {
				t.Errorf("second Forget = %+v, %v, serial %d; want nothing forgotten, serial %d", got, err, serial(t, s), want)
			}
		})
	}
}

// TestForgetAfterAnInterruptedApply: an apply killed after submitting a
// job leaves an intent, and no record; once the block is removed, the
// address must still be forgotten, and can be used again.
func TestForgetAfterAnInterruptedApply(t *testing.T) {
	s := openNew(t)
	if err := s.Update(func(tx *Tx) error { return tx.RecordIntent(intent("video.gone[1]", "")) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *Tx) error { return tx.RecordIntent(intent("video.gone[1]", "gen-1")) }); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s) // kill -9, and the next command
	var f Forgotten
	if err := s.Update(func(tx *Tx) (err error) { f, err = tx.Forget(a("video.gone[1]")); return err }); err != nil {
		t.Fatalf("Forget: %v", err)
	}
	if f != (Forgotten{Intent: true, GenerationID: "gen-1"}) {
		t.Errorf("Forget = %+v", f)
	}
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Resources)+len(snap.Intents)+len(snap.Protections) != 0 {
		t.Errorf("state after Forget: %+v", snap)
	}
}

// TestMove checks the record Move leaves: the one given, under its new
// address, with the source's creation time and protection.
func TestMove(t *testing.T) {
	s := seed(t)
	t1 := t0.Add(time.Hour)
	fixedClock(s, t1)
	var want *Resource
	err := s.Update(func(tx *Tx) error {
		r, err := tx.Resource(a("image.a"))
		if err != nil {
			return err
		}
		r.Addr = a(`image.a["x"]`)
		r.Dir = "generated/image/x"
		r.Outputs = r.Outputs[:1]
		r.Outputs[0].Path = "generated/image/x/0.png"
		want = r
		return tx.Move(a("image.a"), r)
	})
	if err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	got, err := s.Resource(a(`image.a["x"]`))
	if err != nil {
		t.Fatal(err)
	}
	w := *want
	w.UpdatedAt = t1
	if diff := cmp.Diff(&w, got, cmpAddrs); diff != "" {
		t.Errorf("moved record (-want +got):\n%s", diff)
	}
	if !got.CreatedAt.Equal(t0) {
		t.Errorf("moved record created %v, want the source's %v", got.CreatedAt, t0)
	}
	err = s.Update(func(tx *Tx) error {
		for addr, want := range map[string]bool{"image.a": false, `image.a["x"]`: true} {
			if got, err := tx.Protected(a(addr)); err != nil || got != want {
				t.Errorf("Protected(%s) = %v, %v; want %v", addr, got, err, want)
			}
		}
		if in, err := tx.Intent(a("image.a")); err != nil || in == nil || in.GenerationID != "gen-a2" {
			t.Errorf("intent at the source = %+v, %v; want it kept", in, err)
		}
		if r, err := tx.Resource(a("image.a")); err != nil || r != nil {
			t.Errorf("record at the source = %+v, %v; want none", r, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestTxReads(t *testing.T) {
	s := seed(t)
	err := s.Update(func(tx *Tx) error {
		t.Run("Resource sees the transaction's own writes", func(t *testing.T) {
			r := sampleResource("image.new", 1)
			if err := tx.Record(r); err != nil {
				t.Fatal(err)
			}
			got, err := tx.Resource(a("image.new"))
			if err != nil || got == nil || got.Fingerprint != r.Fingerprint {
				t.Errorf("Resource(image.new) = %+v, %v", got, err)
			}
		})
		t.Run("Resource of a missing address", func(t *testing.T) {
			if got, err := tx.Resource(a("image.none")); got != nil || err != nil {
				t.Errorf("Resource = %v, %v; want nil, nil", got, err)
			}
		})
		t.Run("Intent", func(t *testing.T) {
			got, err := tx.Intent(a("video.d"))
			if err != nil || got == nil || got.Addr != a("video.d") || got.Endpoint != addrs.Text2Video {
				t.Errorf("Intent(video.d) = %+v, %v", got, err)
			}
			if got, err := tx.Intent(a("video.none")); got != nil || err != nil {
				t.Errorf("Intent(missing) = %v, %v; want nil, nil", got, err)
			}
		})
		t.Run("Protected", func(t *testing.T) {
			for addr, want := range map[string]bool{"image.a": true, "image.b": false, "image.none": false} {
				got, err := tx.Protected(a(addr))
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
		if err := s.Update(func(tx *Tx) error { return tx.Record(r) }); err != nil {
			t.Fatal(err)
		}
	}
	get := func(addr string) *Resource {
		t.Helper()
		r, err := s.Resource(a(addr))
		if err != nil || r == nil {
			t.Fatalf("Resource(%s) = %v, %v", addr, r, err)
		}
		return r
	}
	put(&Resource{Addr: a("image.a"), Endpoint: addrs.Text2Image})
	if r := get("image.a"); !r.CreatedAt.Equal(t0) || !r.UpdatedAt.Equal(t0) {
		t.Errorf("new record: created %v updated %v, want both %v", r.CreatedAt, r.UpdatedAt, t0)
	}

	t1 := t0.Add(time.Hour)
	fixedClock(s, t1)
	put(&Resource{Addr: a("image.a"), Endpoint: addrs.Text2Image, Status: "succeed"})
	if r := get("image.a"); !r.CreatedAt.Equal(t0) || !r.UpdatedAt.Equal(t1) {
		t.Errorf("replaced record: created %v updated %v, want %v and %v", r.CreatedAt, r.UpdatedAt, t0, t1)
	}

	t2 := t1.Add(time.Hour)
	fixedClock(s, t2)
	if err := s.Update(func(tx *Tx) error { return move(tx, "image.a", "image.b") }); err != nil {
		t.Fatal(err)
	}
	if r := get("image.b"); !r.CreatedAt.Equal(t0) || !r.UpdatedAt.Equal(t2) || r.Status != "succeed" {
		t.Errorf("moved record: %+v", r)
	}

	err := s.Update(func(tx *Tx) error {
		if err := tx.RecordIntent(intent("image.c", "")); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fixedClock(s, t2.Add(time.Minute))
	err = s.Update(func(tx *Tx) error {
		return tx.RecordIntent(intent("image.c", "gen-1"))
	})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	in := snap.Intents[a("image.c")]
	if !in.CreatedAt.Equal(t2) || !in.SubmittedAt.Equal(t2.Add(time.Minute)) {
		t.Errorf("intent: created %v submitted %v, want %v and %v", in.CreatedAt, in.SubmittedAt, t2, t2.Add(time.Minute))
	}
}

// TestWritesRefuseWhatCannotBeRead: a record the decoder would refuse is
// refused when written, with nothing committed, so a bad caller cannot
// leave a state that every later command reports as corrupt.
func TestWritesRefuseWhatCannotBeRead(t *testing.T) {
	noName := addrs.Resource{Kind: addrs.Image}.Instance(addrs.NoKey)
	noKind := addrs.Resource{Name: "x"}.Instance(addrs.NoKey)
	badName := addrs.Resource{Kind: addrs.Image, Name: "has space"}.Instance(addrs.NoKey)
	withEndpoint := func(addr string, ep addrs.Endpoint) *Resource {
		r := sampleResource(addr, 1)
		r.Endpoint = ep
		return r
	}
	tests := []struct {
		name  string
		write func(tx *Tx) error
		want  string
	}{
		{"record without an endpoint", func(tx *Tx) error { return tx.Record(withEndpoint("image.a", addrs.Endpoint{})) }, "does not generate a image"},
		{"record with the other kind's endpoint", func(tx *Tx) error { return tx.Record(withEndpoint("video.v", addrs.Text2Image)) }, "does not generate a video"},
		{"record with a zero dependency", func(tx *Tx) error {
			r := sampleResource("image.a", 1)
			r.Deps = []addrs.Resource{{}}
			return tx.Record(r)
		}, "dependency"},
		{"record without a kind", func(tx *Tx) error {
			r := sampleResource("image.a", 1)
			r.Addr = noKind
			return tx.Record(r)
		}, "not a resource address"},
		{"intent with a name that is no identifier", func(tx *Tx) error {
			return tx.RecordIntent(&Intent{Addr: badName, Endpoint: addrs.Text2Image})
		}, "not a resource address"},
		{"intent without an endpoint", func(tx *Tx) error { return tx.RecordIntent(&Intent{Addr: a("image.a")}) }, "does not generate"},
		{"protection of an address without a name", func(tx *Tx) error { return tx.Protect(noName, true) }, "not a resource address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openNew(t)
			before := serial(t, s)
			err := s.Update(tt.write)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one saying %q", err, tt.want)
			}
			if got := serial(t, s); got != before {
				t.Errorf("serial %d -> %d: something was committed", before, got)
			}
			if _, err := s.Snapshot(); err != nil {
				t.Errorf("the state no longer reads: %v", err)
			}
		})
	}
}

// TestNonCanonicalKeys: a key that parses as an address but is not written
// the way genform writes it (image.hero[007]) cannot be found from the
// address it names, so it is neither listed for state rm nor offered as
// the remedy of its corrupt record.
func TestNonCanonicalKeys(t *testing.T) {
	s := openNew(t)
	fill(t, s, 1)
	rawPut(t, s, bucketResources, "image.hero[007]", []byte{0xff})
	res, _, err := s.Addresses()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.String() == "image.hero[7]" {
			t.Errorf("Addresses lists %s for the key image.hero[007]", r)
		}
	}
	_, err = s.Snapshot()
	var ce *CorruptError
	if !errors.As(err, &ce) || strings.Contains(err.Error(), "state rm") {
		t.Errorf("Snapshot: %v; want a corrupt record without a state rm remedy", err)
	}
}
