package simkit

import (
	"testing"
	"time"
)

func TestQueueStartsInOrderBehindTheLimit(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := NewQueue(2)
	starts := []time.Time{
		q.Start("a", t0, 10*time.Second),
		q.Start("a", t0, 10*time.Second),
		q.Start("a", t0.Add(time.Second), 10*time.Second),
		q.Start("b", t0.Add(time.Second), 10*time.Second),
	}
	want := []time.Time{t0, t0, t0.Add(10 * time.Second), t0.Add(time.Second)}
	for i := range want {
		if !starts[i].Equal(want[i]) {
			t.Errorf("job %d starts at %s, want %s", i, starts[i].Sub(t0), want[i].Sub(t0))
		}
	}
	if s := NewQueue(-1).Start("a", t0, time.Hour); !s.Equal(t0) {
		t.Errorf("without a limit a job waits until %s", s)
	}
}

func TestQueueTakeRefusesPastTheLimit(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := NewQueue(2)
	q.Holds("a", t0.Add(30*time.Second)) // a job loaded from disk
	if _, ok := q.Take("a", t0, 10*time.Second); !ok {
		t.Fatal("second slot refused")
	}
	if ra, ok := q.Take("a", t0.Add(time.Second), 10*time.Second); ok || ra != 9 {
		t.Errorf("third job: ok %v, Retry-After %d, want refused for 9s (the first slot frees up at 10s)", ok, ra)
	}
	if _, ok := q.Take("b", t0, time.Hour); !ok {
		t.Error("another key shares the slots")
	}
	q.Release("a", t0.Add(10*time.Second)) // that job was not made after all
	if _, ok := q.Take("a", t0.Add(time.Second), 10*time.Second); !ok {
		t.Error("a released slot stays taken")
	}
	if _, ok := q.Take("a", t0.Add(30*time.Second), 10*time.Second); !ok {
		t.Error("refused once every slot has freed up")
	}
	if _, ok := NewQueue(-1).Take("a", t0, time.Hour); !ok {
		t.Error("refused without a limit")
	}
}

func TestSignerKeepsItsKeyInTheDataDirectory(t *testing.T) {
	dir := t.TempDir()
	a, err := NewSigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewSigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	sig := a.Sign("job\n123")
	if !b.Valid("job\n123", sig) {
		t.Error("a signature does not hold after a restart")
	}
	if b.Valid("job\n124", sig) {
		t.Error("a signature holds for another message")
	}
	other, err := NewSigner("")
	if err != nil {
		t.Fatal(err)
	}
	if other.Valid("job\n123", sig) {
		t.Error("a signature holds under another key")
	}
}

func TestLimiterWindow(t *testing.T) {
	t0 := time.Now()
	l := NewLimiter(2)
	for i := range 2 {
		if _, ok := l.Admit("a", t0.Add(time.Duration(i)*time.Second)); !ok {
			t.Fatalf("request %d refused", i)
		}
	}
	if ra, ok := l.Admit("a", t0.Add(2*time.Second)); ok || ra != 58 {
		t.Errorf("third request: ok %v, Retry-After %d, want refused for 58s", ok, ra)
	}
	if _, ok := l.Admit("b", t0); !ok {
		t.Error("another key shares the window")
	}
	if _, ok := l.Admit("a", t0.Add(RateWindow+time.Millisecond)); !ok {
		t.Error("refused once the oldest left the window")
	}
}

func TestRunStages(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &Run{CreatedAt: t0, StartAt: t0.Add(time.Second), Latency: 10 * time.Second, Weird: true}
	for _, tt := range []struct {
		at   time.Duration
		want Stage
	}{{0, Queued}, {2 * time.Second, Running}, {6 * time.Second, Odd}, {9 * time.Second, Running}, {11 * time.Second, Finished}} {
		if st, _, _ := r.StageAt(t0.Add(tt.at)); st != tt.want {
			t.Errorf("at %s: %s, want %s", tt.at, st, tt.want)
		}
	}
	r.Deadline = t0.Add(500 * time.Millisecond)
	if st, _, _ := r.StageAt(t0.Add(time.Minute)); st != Aborted {
		t.Errorf("a deadline before the start: %s, want aborted", st)
	}
	r.Deadline = t0.Add(5 * time.Second)
	if st, p, _ := r.StageAt(t0.Add(time.Minute)); st != Canceled || p != 0.4 {
		t.Errorf("a deadline while running: %s at %v, want canceled at 0.4", st, p)
	}
}

func TestPromptEnd(t *testing.T) {
	for prompt, want := range map[string]End{"ok": Succeed, "x [fail]": Fail, "x [nsfw]": Refuse, "[nsfw] [fail]": Refuse} {
		if got, _ := PromptEnd(prompt); got != want {
			t.Errorf("%q ends %s, want %s", prompt, got, want)
		}
	}
}
