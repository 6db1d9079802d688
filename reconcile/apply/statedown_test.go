package apply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genform/genform/statefile"
)

// downBackend is a statefile.Backend in memory whose storage can stop
// answering (setDown): from then on every transaction waits a while and
// fails with an error matching statefile.ErrUnavailable, as pgstate's do
// when the database stopped answering.
type downBackend struct {
	mu   sync.Mutex
	data map[string]map[string][]byte
	down atomic.Bool
	wait time.Duration
}

var errDown = fmt.Errorf("the test's database did not answer: %w", statefile.ErrUnavailable)

func (b *downBackend) setDown() { b.down.Store(true) }

func (b *downBackend) Name() string { return "memory" }

func (b *downBackend) Database() bool { return true }

func (b *downBackend) View(fn func(statefile.RawTx) error) error { return b.run(fn, false) }

func (b *downBackend) Update(fn func(statefile.RawTx) error) error { return b.run(fn, true) }

func (b *downBackend) Batch(fn func(statefile.RawTx) error) error { return b.run(fn, true) }

func (b *downBackend) Migrate(_ int, fn func(statefile.RawTx) error) error { return b.run(fn, true) }

func (b *downBackend) BeforeWrite() error { return nil }

func (b *downBackend) CheckStorage() ([]error, error) { return nil, nil }

func (b *downBackend) Close() error { return nil }

// run runs fn on a copy of the data, kept when a write succeeds.
func (b *downBackend) run(fn func(statefile.RawTx) error, write bool) error {
	if b.down.Load() {
		time.Sleep(b.wait)
		return errDown
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	tx := &downTx{data: map[string]map[string][]byte{}}
	for name, bk := range b.data {
		tx.data[name] = map[string][]byte{}
		for k, v := range bk {
			tx.data[name][k] = v
		}
	}
	if err := fn(tx); err != nil {
		return err
	}
	if write {
		b.data = tx.data
	}
	return nil
}

type downTx struct{ data map[string]map[string][]byte }

func (t *downTx) Layout() (statefile.Layout, error) {
	if len(t.data) == 0 {
		return statefile.LayoutNone, nil
	}
	return statefile.LayoutGenform, nil
}

func (t *downTx) Bucket(name []byte) (statefile.Bucket, error) {
	if t.data[string(name)] == nil {
		return nil, nil
	}
	return downBucket(t.data[string(name)]), nil
}

func (t *downTx) CreateBucket(name []byte) (statefile.Bucket, error) {
	if t.data[string(name)] == nil {
		t.data[string(name)] = map[string][]byte{}
	}
	return downBucket(t.data[string(name)]), nil
}

type downBucket map[string][]byte

func (b downBucket) Get(key []byte) ([]byte, error) { return bytes.Clone(b[string(key)]), nil }

func (b downBucket) Put(key, value []byte) error {
	b[string(key)] = bytes.Clone(value)
	if b[string(key)] == nil {
		b[string(key)] = []byte{}
	}
	return nil
}

func (b downBucket) Delete(key []byte) error {
	delete(b, string(key))
	return nil
}

func (b downBucket) ForEach(fn func(k, v []byte) error) error { return b.ForEachPrefix(nil, fn) }

func (b downBucket) ForEachPrefix(prefix []byte, fn func(k, v []byte) error) error {
	var keys []string
	for k := range b {
		if strings.HasPrefix(k, string(prefix)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := fn([]byte(k), b[k]); err != nil {
			return err
		}
	}
	return nil
}

func (b downBucket) Len() (int, error) { return len(b), nil }

// TestApplyStateDownIsNotTheService checks an apply whose state's database
// stops answering while a job runs, for longer than the service timeout:
// the job's failure is the state's, never the service timeout's, the
// result's state error says the state could not be reached, and the job
// is left for the next apply (resumed, when its id was recorded; adopted
// with genform import, when not).
func TestApplyStateDownIsNotTheService(t *testing.T) {
	for _, c := range []struct {
		name string
		// when makes the state stop answering.
		when func(svc *fakeService, be *downBackend)
		// kept is whether the job's id was recorded before.
		kept bool
	}{
		{"after the create request", func(svc *fakeService, be *downBackend) { svc.afterCreate = func(string) { be.setDown() } }, false},
		{"while the job runs", func(svc *fakeService, be *downBackend) { svc.beforeStatus = func(string) { be.setDown() } }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fastCommitRetries(t)
			be := &downBackend{wait: 300 * time.Millisecond}
			st, err := statefile.OpenBackend(be, statefile.Options{Create: true, Command: "test"})
			if err != nil {
				t.Fatal(err)
			}
			svc := &fakeService{}
			w := newApplyDir(t, svc)
			w.store = st
			w.timeout = 200 * time.Millisecond
			p := w.plan(oneImage)
			c.when(svc, be)
			res := w.apply(context.Background(), p)
			if !errors.Is(res.StateErr, statefile.ErrUnavailable) {
				t.Errorf("state error %v, want the database's", res.StateErr)
			}
			if len(res.Failed) != 1 {
				t.Fatalf("failed %v, want image.a", res.Failed)
			}
			if msg := res.Failed[0].Err.Error(); !errors.Is(res.Failed[0].Err, statefile.ErrUnavailable) || strings.Contains(msg, "(the service timeout)") || strings.Contains(msg, "stopped at the service timeout") {
				t.Errorf("image.a failed with %q, want the state's error", msg)
			}
			jobs := res.Unrecorded
			if c.kept {
				jobs = res.Unfinished
			}
			if len(jobs) != 1 || jobs[0].GenerationID != "job-1" {
				t.Errorf("unrecorded %v, unfinished %v: want job-1 in the %s", res.Unrecorded, res.Unfinished, map[bool]string{true: "unfinished", false: "unrecorded"}[c.kept])
			}
		})
	}
}
