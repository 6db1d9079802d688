package apply

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/reconcile/plans"
)

// losing is the fake service behind a connection that loses the answers
// to create requests: with lose set, the service makes the job (and is
// paid for it) and the answer never arrives; with neverSent also set,
// the request is lost on the way, and nothing is made. It notes every
// job made, with its request and when, for listing.
type losing struct {
	provider.Provider
	lose, neverSent atomic.Bool

	mu   sync.Mutex
	made []madeJob
}

type madeJob struct {
	job  provider.Job
	body string
	at   time.Time
}

// errLostAnswer is what a create whose answer was lost gets.
var errLostAnswer = fmt.Errorf("reading the answer: %w", apiclient.ErrAmbiguousCreate)

func (l *losing) Submit(ctx context.Context, r provider.Request) (provider.Job, error) {
	if l.lose.Load() && l.neverSent.Load() {
		if err := apiclient.PassCreateGate(ctx); err != nil {
			return provider.Job{}, err
		}
		return provider.Job{}, errLostAnswer
	}
	job, err := l.Provider.Submit(ctx, r)
	if err != nil {
		return job, err
	}
	l.mu.Lock()
	l.made = append(l.made, madeJob{job: job, body: string(r.Body), at: time.Now()})
	l.mu.Unlock()
	if l.lose.Load() {
		return provider.Job{}, errLostAnswer
	}
	return job, nil
}

// listing is losing on a provider that can list its recent jobs
// (provider.Recoverer), as fal's or Replicate's can: Recover finds the
// jobs made for the very request in the window of the lost create, and
// only one is taken.
type listing struct {
	*losing
	listErr error
	lists   atomic.Int32
}

func (l *listing) Recover(ctx context.Context, r provider.Request, since, until time.Time) (provider.Job, bool, error) {
	l.lists.Add(1)
	if l.listErr != nil {
		return provider.Job{}, false, l.listErr
	}
	win := provider.WindowOf(since, until)
	l.mu.Lock()
	var found []provider.Job
	for _, m := range l.made {
		if m.body == string(r.Body) && !m.at.Before(win.From) && !m.at.After(win.To) {
			found = append(found, m.job)
		}
	}
	l.mu.Unlock()
	return provider.OnlyMatch("job", found, func(j provider.Job) string { return j.ID })
}

var _ provider.Recoverer = (*listing)(nil)

// quickRecovery makes the looks for a lost job follow one another at
// once, for the length of t.
func quickRecovery(t *testing.T) {
	saved := recoverWaits
	recoverWaits = []time.Duration{0, time.Millisecond, time.Millisecond}
	t.Cleanup(func() { recoverWaits = saved })
}

// A lost answer to a create, on a provider that lists its jobs, is found
// again at once: the job is followed and recorded, and nothing more is
// paid for.
func TestLostAnswerFoundByListing(t *testing.T) {
	svc := &fakeService{}
	w := newApplyDir(t, svc)
	lst := &listing{losing: &losing{}}
	lst.lose.Store(true)
	w.wrap = func(p provider.Provider) provider.Provider { lst.Provider = p; return lst }

	res := w.apply(context.Background(), w.plan(oneImage))
	if addrList(res.Generated) != "image.a" || addrList(res.Recovered) != "image.a" || len(res.Failed)+len(res.PossiblyPaid) != 0 {
		t.Fatalf("generated %q, recovered %q, failed %v, possibly paid %+v", addrList(res.Generated), addrList(res.Recovered), res.Failed, res.PossiblyPaid)
	}
	if svc.count("Create") != 1 || lst.lists.Load() != 1 {
		t.Errorf("%d creates and %d listings; want the one create found by one listing", svc.count("Create"), lst.lists.Load())
	}
	if !w.warned("image.a", "the answer to the create request was lost", "its job job-1 was found by listing", "paying nothing more") {
		t.Errorf("no warning that the job was found again: %v", w.eventsOf("image.a"))
	}
	rec := w.snapshot().Resources[a("image.a")]
	if rec == nil || rec.GenerationID != "job-1" || rec.Status != plans.StatusSucceed {
		t.Fatalf("recorded %+v, want job-1", rec)
	}
	w.checkFiles(rec, "generated/image/a")
	if got := w.read(rec.Outputs[0].Path); got != fakeMedia("job-1", 0, ".png") {
		t.Errorf("the file holds %q, want job-1's", got)
	}
	w.checkNoChanges(oneImage, "after the lost job was found")
}

// A create whose answer an earlier apply lost, on a provider that could
// not list, is possibly paid; the next apply on a provider that can list
// finds its job, records its id and resumes it, and pays nothing more.
func TestLostAnswerFoundByALaterApply(t *testing.T) {
	svc := &fakeService{}
	w := newApplyDir(t, svc)
	lose := &losing{}
	lose.lose.Store(true)
	w.wrap = func(p provider.Provider) provider.Provider { lose.Provider = p; return lose }
	res := w.apply(context.Background(), w.plan(oneImage))
	if len(res.PossiblyPaid) != 1 || !errors.Is(res.PossiblyPaid[0].Err, apiclient.ErrAmbiguousCreate) {
		t.Fatalf("possibly paid %+v, want image.a", res.PossiblyPaid)
	}

	p := w.plan(oneImage)
	if c := p.Change(a("image.a")); !c.PossiblyPaid() {
		t.Fatalf("planned %s %+v, want the create possibly paid", c.Action, c.Reason)
	}
	lst := &listing{losing: lose}
	lose.lose.Store(false)
	w.wrap = func(p provider.Provider) provider.Provider { lose.Provider = p; return lst }
	res = w.apply(context.Background(), p)
	if addrList(res.Resumed) != "image.a" || addrList(res.Recovered) != "image.a" || len(res.Failed)+len(res.PossiblyPaid)+len(res.Generated) != 0 {
		t.Fatalf("resumed %q, recovered %q, generated %q, failed %v, possibly paid %+v",
			addrList(res.Resumed), addrList(res.Recovered), addrList(res.Generated), res.Failed, res.PossiblyPaid)
	}
	if svc.count("Create") != 1 {
		t.Errorf("%d creates, want the one an earlier apply sent", svc.count("Create"))
	}
	if !w.warned("image.a", "the create request an earlier apply sent got no answer", "its job job-1 was found") {
		t.Errorf("no warning that the earlier job was found: %v", w.eventsOf("image.a"))
	}
	snap := w.snapshot()
	rec := snap.Resources[a("image.a")]
	if rec == nil || rec.GenerationID != "job-1" || snap.Intents[a("image.a")] != nil {
		t.Fatalf("recorded %+v, intent %+v; want job-1 recorded, the intent gone", rec, snap.Intents[a("image.a")])
	}
	w.checkFiles(rec, "generated/image/a")
	w.checkNoChanges(oneImage, "after the earlier job was found")
}

// A lost create that the provider's list does not show (the request never
// reached it), or that the list cannot tell apart, stays possibly paid:
// nothing is sent again and the intent is kept for the user to decide.
func TestLostAnswerNotFound(t *testing.T) {
	for _, tc := range []struct {
		name string
		// prompt is image.b's; image.a, made before, asks for a red apple.
		prompt string
		// neverSent loses image.b's create before the service makes a
		// job; otherwise the job is made and its answer lost.
		neverSent bool
		listErr   error
		lists     int32
		words     []string
	}{
		{name: "nothing made", prompt: "a green apple", neverSent: true, lists: 3},
		{name: "the list fails", prompt: "a green apple", listErr: errors.New("the list is down"), lists: 1,
			words: []string{"looking for the job of the lost create request", "the list is down"}},
		{name: "the only match is another instance's", prompt: "a red apple", neverSent: true, lists: 1,
			words: []string{"the only job matching the lost create request is job-1, which the state already holds for image.a; it is not taken"}},
		{name: "two jobs match", prompt: "a red apple", lists: 1,
			words: []string{"2 jobs made in the window match the request; genform cannot tell which is its own"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			quickRecovery(t)
			svc := &fakeService{}
			w := newApplyDir(t, svc)
			lst := &listing{losing: &losing{}}
			w.wrap = func(p provider.Provider) provider.Provider { lst.Provider = p; return lst }
			w.converge(oneImage)
			src := oneImage + fmt.Sprintf("image \"b\" {\n  prompt       = %q\n  image_number = 1\n}\n", tc.prompt)
			lst.listErr = tc.listErr
			lst.neverSent.Store(tc.neverSent)
			lst.lose.Store(true)
			creates := svc.count("Create")

			res := w.apply(context.Background(), w.plan(src))
			if len(res.PossiblyPaid) != 1 || res.PossiblyPaid[0].Addr != a("image.b") || !errors.Is(res.PossiblyPaid[0].Err, apiclient.ErrAmbiguousCreate) {
				t.Fatalf("possibly paid %+v, want image.b", res.PossiblyPaid)
			}
			if len(res.Recovered)+len(res.Generated) != 0 || failedAddrs(res.Failed) != "image.b" {
				t.Errorf("recovered %q, generated %q, failed %v", addrList(res.Recovered), addrList(res.Generated), res.Failed)
			}
			if got := lst.lists.Load(); got != tc.lists {
				t.Errorf("the list was read %d times, want %d", got, tc.lists)
			}
			if len(tc.words) > 0 && !w.warned("image.b", tc.words...) {
				t.Errorf("no warning saying %q: %v", tc.words, w.eventsOf("image.b"))
			}
			want := 1
			if tc.neverSent {
				want = 0
			}
			if n := svc.count("Create") - creates; n != want {
				t.Errorf("the service got %d creates for image.b, want %d", n, want)
			}
			snap := w.snapshot()
			if it := snap.Intents[a("image.b")]; it == nil || it.GenerationID != "" || snap.Resources[a("image.b")] != nil {
				t.Errorf("intent %+v, record %+v; want the intent kept without a job, nothing recorded", it, snap.Resources[a("image.b")])
			}
			if rec := snap.Resources[a("image.a")]; rec == nil || rec.GenerationID != "job-1" {
				t.Errorf("image.a's record is now %+v", rec)
			}
			if c := w.plan(src).Change(a("image.b")); !c.PossiblyPaid() {
				t.Errorf("next plan: %s %+v, want image.b waiting, possibly paid", c.Action, c.Reason)
			}
		})
	}
}

// An earlier apply's lost create that the list does not show stays
// possibly paid: the apply sends nothing for it and lists it for the
// user's decision, with when it was sent.
func TestEarlierLostAnswerNotFound(t *testing.T) {
	quickRecovery(t)
	svc := &fakeService{}
	w := newApplyDir(t, svc)
	lst := &listing{losing: &losing{}}
	lst.lose.Store(true)
	lst.neverSent.Store(true)
	w.wrap = func(p provider.Provider) provider.Provider { lst.Provider = p; return lst }
	w.apply(context.Background(), w.plan(oneImage))
	it := w.snapshot().Intents[a("image.a")]
	if it == nil || it.GenerationID != "" {
		t.Fatalf("intent %+v, want a lost create", it)
	}
	lists := lst.lists.Load()

	res := w.apply(context.Background(), w.plan(oneImage))
	if len(res.PossiblyPaid) != 1 || res.PossiblyPaid[0].Addr != a("image.a") || res.PossiblyPaid[0].Err != nil || !res.PossiblyPaid[0].SentAt.Equal(it.CreatedAt) {
		t.Fatalf("possibly paid %+v, want image.a sent at %s by an earlier apply", res.PossiblyPaid, it.CreatedAt)
	}
	if n := lst.lists.Load() - lists; n != int32(len(recoverWaits)) {
		t.Errorf("the list was read %d times, want %d", n, len(recoverWaits))
	}
	if svc.count("Create") != 0 || len(res.Recovered)+len(res.Resumed)+len(res.Generated) != 0 {
		t.Errorf("%d creates; recovered %q, resumed %q", svc.count("Create"), addrList(res.Recovered), addrList(res.Resumed))
	}
	if got := w.snapshot().Intents[a("image.a")]; got == nil || got.GenerationID != "" {
		t.Errorf("intent %+v, want it kept without a job", got)
	}
}
