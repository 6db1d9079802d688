package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
)

// Opener opens the state at one location with opts, as a genform command
// would; every call of one Opener reaches the same state.
type Opener func(opts statefile.Options) (*statefile.Store, error)

// Run runs the suite. newState returns an Opener for a new location that
// holds no state yet.
func Run(t *testing.T, newState func(t *testing.T) Opener) {
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"Records", testRecords},
		{"Intents", testIntents},
		{"History", testHistory},
		{"Protections", testProtections},
		{"MoveAndForget", testMoveAndForget},
		{"SerialAndLineage", testSerialAndLineage},
		{"MissingState", testMissingState},
		{"LockRefusedNamesHolder", testLockRefused},
		{"LockWaits", testLockWaits},
		{"ReadersShare", testReadersShare},
		{"ReadBesideWriter", testReadBesideWriter},
		{"SnapshotSurvivesReopen", testSnapshotReopen},
		{"ParallelBatches", testParallelBatches},
		{"DocumentRoundTrip", testDocumentRoundTrip},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, newState(t)) })
	}
}

// create opens a new state for writing and closes it when the test ends.
func create(t *testing.T, open Opener) *statefile.Store {
	t.Helper()
	s, err := open(statefile.Options{Create: true, Command: "apply"})
	if err != nil {
		t.Fatalf("creating the state: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// reopen closes s and opens the state again, as the next command would.
func reopen(t *testing.T, s *statefile.Store, open Opener, opts statefile.Options) *statefile.Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("closing: %v", err)
	}
	s2, err := open(opts)
	if err != nil {
		t.Fatalf("reopening: %v", err)
	}
	t.Cleanup(func() { s2.Close() })
	return s2
}

func addr(s string) addrs.Instance {
	a, err := addrs.ParseInstance(s)
	if err != nil {
		panic(err)
	}
	return a
}

const fp1 = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// resource is a record as apply writes it after a success.
func resource(a, fp, gid string) *statefile.Resource {
	in := addr(a)
	dir := "generated/" + in.Resource.Kind.String() + "/" + in.Resource.Name
	return &statefile.Resource{
		Addr: in, Endpoint: addrs.Text2Image, Fingerprint: fp,
		Request:      json.RawMessage(`{"prompt":"a lighthouse at dusk","config":{"image_number":1}}`),
		GenerationID: gid, CreationID: "cr-" + gid, Status: "succeed",
		Detail: json.RawMessage(`{"status":"succeed"}`),
		Dir:    dir,
		Outputs: []statefile.Output{{
			Index: 0, ID: "out-" + gid, MediaURL: "https://cdn.example.com/" + gid + ".png", Path: dir + "/0.png",
			Size: 1234, ModTime: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC), SHA256: strings.Repeat("ab", 32), ContentType: "image/png",
		}},
	}
}

func update(t *testing.T, s *statefile.Store, fn func(tx *statefile.Tx) error) {
	t.Helper()
	if err := s.Update(fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func snapshot(t *testing.T, s *statefile.Store) *statefile.Snapshot {
	t.Helper()
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	return snap
}

// sameRecord compares what a caller wrote with what the store returns,
// past the timestamps and the serial the store sets.
func sameRecord(t *testing.T, got, want *statefile.Resource) {
	t.Helper()
	if got == nil {
		t.Fatalf("no record for %s", want.Addr)
	}
	g, w := *got, *want
	g.CreatedAt, g.UpdatedAt, w.CreatedAt, w.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	g.Serial, w.Serial = 0, 0
	if d := cmp.Diff(&w, &g); d != "" {
		t.Errorf("record of %s (-written +read):\n%s", want.Addr, d)
	}
}

func testRecords(t *testing.T, open Opener) {
	s := create(t, open)
	hero, bg := resource("image.hero", fp1, "g1"), resource("image.bg[\"red\"]", fp1+"2", "g2")
	update(t, s, func(tx *statefile.Tx) error {
		if err := tx.Record(hero); err != nil {
			return err
		}
		return tx.Record(bg)
	})
	got, err := s.Resource(hero.Addr)
	if err != nil {
		t.Fatal(err)
	}
	sameRecord(t, got, hero)
	if got.CreatedAt.IsZero() || got.UpdatedAt.IsZero() {
		t.Errorf("Record left the timestamps zero: %v, %v", got.CreatedAt, got.UpdatedAt)
	}
	snap := snapshot(t, s)
	if len(snap.Resources) != 2 {
		t.Fatalf("snapshot holds %d resources, want 2", len(snap.Resources))
	}
	sameRecord(t, snap.Resources[bg.Addr], bg)
	// Replacing a record keeps when it was first recorded.
	again := resource("image.hero", fp1, "g3")
	update(t, s, func(tx *statefile.Tx) error { return tx.Record(again) })
	got2, err := s.Resource(hero.Addr)
	if err != nil {
		t.Fatal(err)
	}
	sameRecord(t, got2, again)
	if !got2.CreatedAt.Equal(got.CreatedAt) {
		t.Errorf("CreatedAt changed from %v to %v on replace", got.CreatedAt, got2.CreatedAt)
	}
	// Each generation carries the serial it was first recorded at, and
	// the meta where the writing command started.
	if got.Serial != 1 || got2.Serial != 2 {
		t.Errorf("the generations were recorded at serials %d and %d, want 1 and 2", got.Serial, got2.Serial)
	}
	rewritten := *got2
	rewritten.Dir = "generated/image/moved"
	update(t, s, func(tx *statefile.Tx) error { return tx.Record(&rewritten) })
	if got3, err := s.Resource(hero.Addr); err != nil {
		t.Error(err)
	} else if got3.Serial != 2 {
		t.Errorf("a record written again for the same generation has serial %d, want it kept at 2", got3.Serial)
	}
	if m, err := s.Meta(); err != nil || m.RunStart != 0 || m.Serial != 3 {
		t.Errorf("meta = %+v, %v; want serial 3, and run_start 0 where this store's first change began", m, err)
	}
	if none, err := s.Resource(addr("image.nothing")); err != nil || none != nil {
		t.Errorf("Resource of an address without a record = %v, %v", none, err)
	}
	// A record the store must refuse leaves the state as it was.
	bad := resource("image.bad", fp1, "g4")
	bad.Request = json.RawMessage(`{not json`)
	if err := s.Update(func(tx *statefile.Tx) error { return tx.Record(bad) }); err == nil {
		t.Error("Record of a request that is not JSON succeeded")
	}
	if r, _ := s.Resource(bad.Addr); r != nil {
		t.Error("a refused record was stored")
	}
}

func testIntents(t *testing.T, open Opener) {
	s := create(t, open)
	hero := addr("image.hero")
	update(t, s, func(tx *statefile.Tx) error {
		return tx.RecordIntent(&statefile.Intent{Addr: hero, Endpoint: addrs.Text2Image, Fingerprint: fp1})
	})
	first, err := s.Intent(hero)
	if err != nil || first == nil || first.GenerationID != "" || first.CreatedAt.IsZero() {
		t.Fatalf("intent before the answer = %+v, %v", first, err)
	}
	update(t, s, func(tx *statefile.Tx) error {
		return tx.RecordIntent(&statefile.Intent{Addr: hero, Endpoint: addrs.Text2Image, Fingerprint: fp1, GenerationID: "job-1"})
	})
	second, err := s.Intent(hero)
	if err != nil || second.GenerationID != "job-1" || !second.CreatedAt.Equal(first.CreatedAt) || second.SubmittedAt.IsZero() {
		t.Fatalf("intent after the answer = %+v, %v (first %+v)", second, err, first)
	}
	if snap := snapshot(t, s); len(snap.Intents) != 1 || snap.Intents[hero].GenerationID != "job-1" {
		t.Errorf("snapshot intents = %+v", snap.Intents)
	}
	// Recording the generation clears the intent.
	update(t, s, func(tx *statefile.Tx) error { return tx.Record(resource("image.hero", fp1, "job-1")) })
	if in, err := s.Intent(hero); err != nil || in != nil {
		t.Errorf("intent after Record = %+v, %v", in, err)
	}
	// A refused submission's intent is cleared, twice harmlessly.
	other := addr("image.other")
	update(t, s, func(tx *statefile.Tx) error {
		return tx.RecordIntent(&statefile.Intent{Addr: other, Endpoint: addrs.Text2Image, Fingerprint: fp1})
	})
	for range 2 {
		update(t, s, func(tx *statefile.Tx) error { return tx.ClearIntent(other) })
	}
	if in, _ := s.Intent(other); in != nil {
		t.Errorf("intent after ClearIntent = %+v", in)
	}
	// Forget reports the job of an intent it removes.
	update(t, s, func(tx *statefile.Tx) error {
		return tx.RecordIntent(&statefile.Intent{Addr: other, Endpoint: addrs.Text2Image, Fingerprint: fp1, GenerationID: "job-2"})
	})
	var f statefile.Forgotten
	update(t, s, func(tx *statefile.Tx) error {
		var err error
		f, err = tx.Forget(other)
		return err
	})
	if f.Record || !f.Intent || f.GenerationID != "job-2" {
		t.Errorf("Forget of an intent = %+v", f)
	}
	resources, intents, err := s.Addresses()
	if err != nil || len(resources) != 1 || len(intents) != 0 {
		t.Errorf("Addresses = %v, %v, %v", resources, intents, err)
	}
}

func testHistory(t *testing.T, open Opener) {
	s := create(t, open)
	update(t, s, func(tx *statefile.Tx) error { return tx.Record(resource("image.hero", fp1, "g1")) })
	time.Sleep(5 * time.Millisecond) // the history orders by time recorded
	update(t, s, func(tx *statefile.Tx) error { return tx.Record(resource("image.hero", fp1, "g2")) })
	update(t, s, func(tx *statefile.Tx) error { return tx.Record(resource("image.other", fp1+"x", "g3")) })
	gens, err := s.Generations(fp1)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, g := range gens {
		ids = append(ids, g.GenerationID)
	}
	if strings.Join(ids, ",") != "g2,g1" {
		t.Errorf("Generations(fp1) = %v, want g2,g1 (the newest first, and not fp1x's)", ids)
	}
	g1, err := s.Generation(fp1, "g1")
	if err != nil || g1 == nil || g1.Addr != addr("image.hero") {
		t.Errorf("Generation(fp1, g1) = %+v, %v", g1, err)
	}
	if none, err := s.Generation(fp1, "nope"); err != nil || none != nil {
		t.Errorf("Generation of an unknown id = %+v, %v", none, err)
	}
	hist, err := s.History(addr("image.hero"))
	if err != nil || len(hist) != 2 {
		t.Errorf("History(image.hero) = %d entries, %v; want 2", len(hist), err)
	}
	// Forgetting leaves the history; RecordHistory files a generation no
	// record holds.
	update(t, s, func(tx *statefile.Tx) error {
		if _, err := tx.Forget(addr("image.hero")); err != nil {
			return err
		}
		return tx.RecordHistory(resource("image.gone", fp1+"y", "g4"))
	})
	n, err := s.HistoryLen()
	if err != nil || n != 4 {
		t.Errorf("HistoryLen = %d, %v; want 4", n, err)
	}
	if r, _ := s.Resource(addr("image.gone")); r != nil {
		t.Error("RecordHistory wrote a record")
	}
	all, err := s.History(addrs.Instance{})
	if err != nil || len(all) != 4 {
		t.Errorf("History() = %d entries, %v; want 4", len(all), err)
	}
}

func testProtections(t *testing.T, open Opener) {
	s := create(t, open)
	hero := addr("image.hero")
	update(t, s, func(tx *statefile.Tx) error { return tx.Protect(hero, true) })
	if snap := snapshot(t, s); !snap.Protections[hero] || len(snap.Protections) != 1 {
		t.Errorf("protections = %v", snap.Protections)
	}
	before := serial(t, s)
	update(t, s, func(tx *statefile.Tx) error { return tx.Protect(hero, true) })
	if serial(t, s) != before {
		t.Error("protecting what is protected raised the serial")
	}
	update(t, s, func(tx *statefile.Tx) error {
		p, err := tx.Protected(hero)
		if err != nil || !p {
			return fmt.Errorf("protected in the transaction = %v, %v", p, err)
		}
		return tx.Protect(hero, false)
	})
	if snap := snapshot(t, s); len(snap.Protections) != 0 {
		t.Errorf("protections after lifting = %v", snap.Protections)
	}
}

func testMoveAndForget(t *testing.T, open Opener) {
	s := create(t, open)
	src, dst := addr("image.a"), addr("image.b")
	update(t, s, func(tx *statefile.Tx) error {
		if err := tx.Record(resource("image.a", fp1, "g1")); err != nil {
			return err
		}
		if err := tx.Record(resource("image.c", fp1+"c", "g2")); err != nil {
			return err
		}
		return tx.Protect(src, true)
	})
	moved := resource("image.b", fp1, "g1")
	update(t, s, func(tx *statefile.Tx) error { return tx.Move(src, moved) })
	snap := snapshot(t, s)
	if snap.Resources[src] != nil || snap.Resources[dst] == nil || !snap.Protections[dst] || snap.Protections[src] {
		t.Errorf("after Move: resources %v, protections %v", keys(snap.Resources), snap.Protections)
	}
	err := s.Update(func(tx *statefile.Tx) error { return tx.Move(src, resource("image.d", fp1, "g1")) })
	if !errors.Is(err, statefile.ErrNotFound) {
		t.Errorf("Move from an address without a record = %v, want ErrNotFound", err)
	}
	err = s.Update(func(tx *statefile.Tx) error { return tx.Move(dst, resource("image.c", fp1, "g1")) })
	if !errors.Is(err, statefile.ErrExists) {
		t.Errorf("Move onto a record = %v, want ErrExists", err)
	}
	var f statefile.Forgotten
	update(t, s, func(tx *statefile.Tx) error {
		var err error
		f, err = tx.Forget(dst)
		return err
	})
	snap = snapshot(t, s)
	if !f.Record || snap.Resources[dst] != nil || snap.Protections[dst] || len(snap.Resources) != 1 {
		t.Errorf("after Forget: %+v, resources %v, protections %v", f, keys(snap.Resources), snap.Protections)
	}
	if g, err := s.Generation(fp1, "g1"); err != nil || g == nil {
		t.Errorf("the history lost a forgotten generation: %v, %v", g, err)
	}
	// Forgetting nothing succeeds.
	update(t, s, func(tx *statefile.Tx) error {
		_, err := tx.Forget(addr("image.never"))
		return err
	})
}

func keys[T any](m map[addrs.Instance]T) []string {
	var out []string
	for k := range m {
		out = append(out, k.String())
	}
	return out
}

func serial(t *testing.T, s *statefile.Store) uint64 {
	t.Helper()
	m, err := s.Meta()
	if err != nil {
		t.Fatal(err)
	}
	return m.Serial
}

func testSerialAndLineage(t *testing.T, open Opener) {
	s := create(t, open)
	m0, err := s.Meta()
	if err != nil {
		t.Fatal(err)
	}
	if m0.Serial != 0 || m0.SchemaVersion != statefile.SchemaVersion || len(m0.Lineage) != 36 || m0.Service != "" {
		t.Errorf("new state's meta = %+v", m0)
	}
	update(t, s, func(tx *statefile.Tx) error { return tx.SetService("simulator") })
	update(t, s, func(tx *statefile.Tx) error { return tx.SetService("simulator") })
	update(t, s, func(tx *statefile.Tx) error { return nil })
	if err := s.Update(func(tx *statefile.Tx) error {
		if err := tx.Record(resource("image.x", fp1, "g1")); err != nil {
			return err
		}
		return errors.New("stop")
	}); err == nil || err.Error() != "stop" {
		t.Errorf("Update returned %v, want fn's error as is", err)
	}
	s = reopen(t, s, open, statefile.Options{Command: "apply"})
	m1, err := s.Meta()
	if err != nil {
		t.Fatal(err)
	}
	if m1.Serial != 1 || m1.Lineage != m0.Lineage || m1.Service != "simulator" {
		t.Errorf("meta after one change = %+v, want serial 1, lineage %s, service simulator", m1, m0.Lineage)
	}
	if r, _ := s.Resource(addr("image.x")); r != nil {
		t.Error("a failed Update left its record")
	}
}

func testMissingState(t *testing.T, open Opener) {
	for _, opts := range []statefile.Options{{ReadOnly: true, Command: "show"}, {Command: "state rm"}} {
		s, err := open(opts)
		if !errors.Is(err, fs.ErrNotExist) {
			if s != nil {
				s.Close()
			}
			t.Errorf("opening a state that does not exist with %+v: %v, want an error matching fs.ErrNotExist", opts, err)
		}
	}
	// And nothing was created by looking.
	s, err := open(statefile.Options{ReadOnly: true})
	if !errors.Is(err, fs.ErrNotExist) {
		if s != nil {
			s.Close()
		}
		t.Errorf("a look created the state: %v", err)
	}
}

func testLockRefused(t *testing.T, open Opener) {
	create(t, open) // held by "apply" until the test ends
	s2, err := open(statefile.Options{Command: "plan"})
	if err == nil {
		s2.Close()
		t.Fatal("a second writer opened the state while the first holds it")
	}
	var le *statefile.LockedError
	if !errors.As(err, &le) {
		t.Fatalf("second writer: %v, want a *LockedError", err)
	}
	host, _ := os.Hostname()
	if h := le.Holder; h == nil || h.Command != "apply" || h.PID != os.Getpid() || h.Host != host || h.Started.IsZero() {
		t.Errorf("holder = %+v, want this process's apply", le.Holder)
	}
	if !strings.Contains(err.Error(), `"genform apply" (pid `+fmt.Sprint(os.Getpid())) {
		t.Errorf("the message does not name the holder: %v", err)
	}
	// A reader keeping writers out (genform init copying the state) is
	// refused by the writer too, and told who it is.
	r, err := open(statefile.Options{ReadOnly: true, KeepWritersOut: true, Command: "init"})
	if err == nil {
		r.Close()
		t.Fatal("a reader keeping writers out opened the state while a writer holds it")
	}
	if !errors.As(err, &le) || le.Holder == nil || le.Holder.Command != "apply" || !le.Shared {
		t.Errorf("reader keeping writers out: %v, want a *LockedError naming apply", err)
	}
}

func testLockWaits(t *testing.T, open Opener) {
	s := create(t, open)
	released := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond)
		s.Close()
		close(released)
	}()
	start := time.Now()
	s2, err := open(statefile.Options{Command: "apply", LockTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("waiting for the lock: %v", err)
	}
	defer s2.Close()
	<-released
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Errorf("got the lock after %v, while the first holder kept it 300ms", waited)
	}
	// A writer that waits in vain says how long it waited.
	_, err = open(statefile.Options{Command: "plan", LockTimeout: 200 * time.Millisecond})
	var le *statefile.LockedError
	if !errors.As(err, &le) || le.Waited != 200*time.Millisecond || !strings.Contains(err.Error(), "after waiting 200ms") {
		t.Errorf("waiting in vain: %v", err)
	}
}

func testReadersShare(t *testing.T, open Opener) {
	s := create(t, open)
	update(t, s, func(tx *statefile.Tx) error { return tx.Record(resource("image.hero", fp1, "g1")) })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var readers []*statefile.Store
	for range 2 {
		r, err := open(statefile.Options{ReadOnly: true, Command: "show"})
		if err != nil {
			t.Fatalf("reader beside a reader: %v", err)
		}
		defer r.Close()
		readers = append(readers, r)
	}
	if snap := snapshot(t, readers[1]); len(snap.Resources) != 1 {
		t.Errorf("a reader sees %d resources", len(snap.Resources))
	}
	if err := readers[0].Update(func(tx *statefile.Tx) error { return tx.Protect(addr("image.hero"), true) }); err == nil {
		t.Error("a reader wrote")
	}
	// Whether a writer opening now waits for these readers is the
	// backend's: the file's readers share its lock and keep a writer out
	// while they read, a database's take none.
}

// testReadBesideWriter checks what a command reading the state gets while
// a writer holds it, in the middle of a transaction: at once, without
// waiting for the writer, the state as last committed, and that one state
// until it closes, however the writer goes on. Nor does the writer, or
// the next one, wait for it.
func testReadBesideWriter(t *testing.T, open Opener) {
	w := create(t, open)
	const n = 5
	var want []string
	for i := range n {
		a := fmt.Sprintf("image.done[%d]", i)
		update(t, w, func(tx *statefile.Tx) error {
			return tx.Record(resource(a, fmt.Sprintf("%s-%d", fp1, i), fmt.Sprint("g", i)))
		})
		want = append(want, a)
	}
	inTx, release, committed := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		committed <- w.Update(func(tx *statefile.Tx) error {
			if err := tx.Record(resource("image.pending", fp1, "gp")); err != nil {
				return err
			}
			close(inTx)
			<-release
			return nil
		})
	}()
	<-inTx
	r, err := open(statefile.Options{ReadOnly: true, Command: "state list"})
	if err != nil {
		close(release)
		<-committed
		t.Fatalf("a reader beside a writer: %v", err)
	}
	defer r.Close()
	if got := slices.Sorted(slices.Values(keys(snapshot(t, r).Resources))); !slices.Equal(got, want) {
		t.Errorf("the reader sees %v, want what was committed, %v", got, want)
	}
	close(release)
	if err := <-committed; err != nil {
		t.Fatalf("the writer's transaction beside a reader: %v", err)
	}
	update(t, w, func(tx *statefile.Tx) error { return tx.Record(resource("image.after", fp1, "ga")) })
	if got := slices.Sorted(slices.Values(keys(snapshot(t, r).Resources))); !slices.Equal(got, want) {
		t.Errorf("after the writer committed more, the reader sees %v, want still %v", got, want)
	}
	if h, err := r.History(addrs.Instance{}); err != nil || len(h) != n {
		t.Errorf("the reader's history: %d entries (%v), want the %d committed when it opened", len(h), err, n)
	}
	r2, err := open(statefile.Options{ReadOnly: true, Command: "show"})
	if err != nil {
		t.Fatalf("a second reader beside the writer: %v", err)
	}
	if got := keys(snapshot(t, r2).Resources); len(got) != n+2 {
		t.Errorf("a reader opened after the writer's commits sees %v", got)
	}
	r2.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w2, err := open(statefile.Options{Command: "apply"})
	if err != nil {
		t.Fatalf("a writer while a reader that opened beside the last one is still open: %v", err)
	}
	update(t, w2, func(tx *statefile.Tx) error {
		_, err := tx.Forget(addr("image.after"))
		return err
	})
	w2.Close()
}

func testSnapshotReopen(t *testing.T, open Opener) {
	s := create(t, open)
	update(t, s, func(tx *statefile.Tx) error {
		for i := range 20 {
			if err := tx.Record(resource(fmt.Sprintf("image.many[%d]", i), fmt.Sprintf("%s-%d", fp1, i), fmt.Sprintf("g%d", i))); err != nil {
				return err
			}
		}
		if err := tx.RecordIntent(&statefile.Intent{Addr: addr("image.pending"), Endpoint: addrs.Text2Image, Fingerprint: fp1, GenerationID: "job"}); err != nil {
			return err
		}
		if err := tx.SetService("https://gen.example.com"); err != nil {
			return err
		}
		return tx.Protect(addr("image.many[3]"), true)
	})
	before := snapshot(t, s)
	s = reopen(t, s, open, statefile.Options{ReadOnly: true})
	after := snapshot(t, s)
	if d := cmp.Diff(before, after); d != "" {
		t.Errorf("snapshot after reopening (-before +after):\n%s", d)
	}
}

func testParallelBatches(t *testing.T, open Opener) {
	s := create(t, open)
	const n = 24
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			a := fmt.Sprintf("image.job[%d]", i)
			errs <- s.Batch(func(tx *statefile.Tx) error {
				return tx.RecordIntent(&statefile.Intent{Addr: addr(a), Endpoint: addrs.Text2Image, Fingerprint: fp1})
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Batch: %v", err)
		}
	}
	if snap := snapshot(t, s); len(snap.Intents) != n {
		t.Errorf("%d intents after %d parallel batches", len(snap.Intents), n)
	}
}

// testDocumentRoundTrip pulls the state as its document, changes the
// state, and pushes the document back: a push that would lose the newer
// changes or another lineage's records is refused, naming both; a forced
// one brings back exactly the state the document was pulled from, which
// pushing again leaves as it is.
func testDocumentRoundTrip(t *testing.T, open Opener) {
	s := create(t, open)
	hero := resource("image.hero", fp1, "gen-1")
	hero.Deps = []addrs.Resource{addr("image.base").Resource}
	hero.WatermarkFree = true
	hero.Detail = json.RawMessage(`{ "status": "succeed",  "note": "a <b> & c" }`)
	failed := resource("image.hero", "sha256:ff", "gen-2")
	hero.Failure = &statefile.Failure{Endpoint: addrs.Text2Image, Fingerprint: "sha256:ff", Request: failed.Request, GenerationID: "gen-2", Error: "content policy", At: time.Date(2026, 11, 21, 11, 0, 0, 5, time.UTC)}
	update(t, s, func(tx *statefile.Tx) error {
		for _, r := range []*statefile.Resource{hero, resource(`image.v["red"]`, "sha256:aa", "gen-3")} {
			if err := tx.Record(r); err != nil {
				return err
			}
		}
		if err := tx.Protect(addr("image.hero"), true); err != nil {
			return err
		}
		if err := tx.RecordIntent(&statefile.Intent{Addr: addr("image.pending"), Endpoint: addrs.Text2Image, Fingerprint: "sha256:p", Request: json.RawMessage(`{"prompt":"p"}`), GenerationID: "job"}); err != nil {
			return err
		}
		return tx.SetService("https://gen.example.com")
	})
	doc, err := s.Document()
	if err != nil {
		t.Fatalf("Document: %v", err)
	}
	var text bytes.Buffer
	if err := statefile.WriteDocument(&text, doc); err != nil {
		t.Fatal(err)
	}
	pulled := text.String()
	if len(doc.Resources) != 2 || len(doc.Intents) != 1 || len(doc.Protections) != 1 || len(doc.History) != 3 || doc.Service != "https://gen.example.com" {
		t.Fatalf("the document holds %d resources, %d intents, %d protections, %d history entries, service %q:\n%s", len(doc.Resources), len(doc.Intents), len(doc.Protections), len(doc.History), doc.Service, pulled)
	}

	// The state moves on: the document is behind it now.
	update(t, s, func(tx *statefile.Tx) error {
		if _, err := tx.Forget(addr("image.hero")); err != nil {
			return err
		}
		return tx.Record(resource("image.other", "sha256:bb", "gen-4"))
	})
	back, err := statefile.ReadDocument(strings.NewReader(pulled))
	if err != nil {
		t.Fatalf("ReadDocument: %v", err)
	}
	_, err = s.Push(back, "state.json", false)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("is newer (serial %d) than state.json (serial %d)", doc.Serial+1, doc.Serial)) {
		t.Fatalf("pushing an older document: %v", err)
	}
	before := serial(t, s)
	c, err := s.Push(back, "state.json", true)
	if err != nil || c != (statefile.Copied{Resources: 2, Intents: 1, History: 3}) {
		t.Fatalf("Push -force = %+v, %v", c, err)
	}
	if got := serial(t, s); got != before+1 {
		t.Errorf("serial after the push: %d, want %d", got, before+1)
	}
	s = reopen(t, s, open, statefile.Options{})
	again, err := s.Document()
	if err != nil {
		t.Fatal(err)
	}
	if again.Serial != before+1 {
		t.Errorf("serial of the pushed state: %d, want %d", again.Serial, before+1)
	}
	again.Serial = doc.Serial
	if d := cmp.Diff(doc, again); d != "" {
		t.Errorf("the state pushed back (-pulled +pushed):\n%s", d)
	}
	rec, err := s.Resource(addr("image.hero"))
	if err != nil {
		t.Fatal(err)
	}
	if string(rec.Detail) != string(hero.Detail) {
		t.Errorf("detail pushed back: %s, want it byte for byte: %s", rec.Detail, hero.Detail)
	}

	// Pushing it again changes nothing, not even the serial.
	back.Serial = before + 1
	if c, err := s.Push(back, "state.json", false); err != nil || !c.Unchanged {
		t.Errorf("pushing the state it holds: %+v, %v", c, err)
	}
	if got := serial(t, s); got != before+1 {
		t.Errorf("serial after an unchanged push: %d, want %d", got, before+1)
	}

	// Another lineage is refused, naming both, unless forced.
	other := *back
	other.Lineage = "00000000-0000-4000-8000-000000000000"
	other.Serial = 999
	_, err = s.Push(&other, "other.json", false)
	if err == nil || !strings.Contains(err.Error(), "(lineage "+doc.Lineage+"), not other.json's (lineage "+other.Lineage+")") {
		t.Fatalf("pushing another lineage: %v", err)
	}
	if _, err := s.Push(&other, "other.json", true); err != nil {
		t.Fatalf("forced push of another lineage: %v", err)
	}
	if m, err := s.Meta(); err != nil || m.Lineage != other.Lineage || m.Serial != 1000 {
		t.Errorf("after the forced push: %+v, %v", m, err)
	}
}
