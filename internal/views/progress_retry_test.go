package views

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/formats/jsonapply"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/reconcile/apply"
	"github.com/genform/genform/reconcile/plans"
)

func retryEvent(addr addrs.Instance, status, attempt int, wait time.Duration) apply.Event {
	return apply.Event{
		Time: time.Now(), Addr: addr, Action: plans.Create, Phase: apply.PhaseRetrying,
		Retry: &provider.RetryInfo{Op: "POST /v1/jobs/text2image", Attempt: attempt, MaxAttempts: 9, HTTPStatus: status, Wait: wait},
	}
}

// TestRetriesInThePlainProgress: one line per retry, repeated retries of
// one instance included, and the check of the service under "service".
func TestRetriesInThePlainProgress(t *testing.T) {
	var out bytes.Buffer
	p := &lineProgress{w: &out, last: map[addrs.Instance]string{}, start: map[addrs.Instance]time.Time{}}
	a := addrs.MustParseInstance("image.a")
	p.Event(retryEvent(addrs.Instance{}, 503, 2, 400*time.Millisecond))
	p.Event(retryEvent(a, 429, 2, 2*time.Second))
	p.Event(retryEvent(a, 429, 3, 2*time.Second))
	p.Event(retryEvent(a, 0, 4, 1234*time.Millisecond))
	want := "service: retrying in 400ms (503 Service Unavailable, attempt 2)\n" +
		"image.a: retrying in 2s (429 Too Many Requests, attempt 2)\n" +
		"image.a: retrying in 2s (429 Too Many Requests, attempt 3)\n" +
		"image.a: retrying in 1.2s (unknown failure, attempt 4)\n"
	if out.String() != want {
		t.Errorf("progress:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestRetriesInTheJSONProgress: beside the plain lines, apply -json has each retry as a progress
// line of phase "retrying" with the retry's fields; the check of the
// service has no address or action.
func TestRetriesInTheJSONProgress(t *testing.T) {
	var out bytes.Buffer
	p := jsonapply.NewProgress(&out)
	p.Event(retryEvent(addrs.MustParseInstance("image.a"), 429, 2, 2*time.Second))
	p.Event(retryEvent(addrs.Instance{}, 500, 3, time.Second))
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), out.String())
	}
	got := fmt.Sprint(lines[0]["address"], " ", lines[0]["action"], " ", lines[0]["phase"], " ", lines[0]["message"], " ", lines[0]["retry"])
	want := "image.a create retrying retrying in 2s (429 Too Many Requests, attempt 2) " +
		"map[attempt:2 http_status:429 max_attempts:9 operation:POST /v1/jobs/text2image reason:429 Too Many Requests wait_seconds:2]"
	if got != want {
		t.Errorf("line 1:\n%s\nwant:\n%s", got, want)
	}
	if lines[1]["address"] != "" || lines[1]["action"] != "" || lines[1]["phase"] != "retrying" {
		t.Errorf("the check's retry: %v", lines[1])
	}
}

// TestJobDoneInTheProgress: while apply waits, a job says the service's
// status and progress; once the service reports it finished, in whatever
// words, it says "job done", the lines and the bars alike.
func TestJobDoneInTheProgress(t *testing.T) {
	var out bytes.Buffer
	p := &lineProgress{w: &out, last: map[addrs.Instance]string{}, start: map[addrs.Instance]time.Time{}}
	a := addrs.MustParseInstance("image.a")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := func(after time.Duration, status string, progress float64, done bool) apply.Event {
		return apply.Event{Time: t0.Add(after), Addr: a, Action: plans.Create, Phase: apply.PhaseRunning,
			Status: status, KnownStatus: true, Progress: progress, JobDone: done}
	}
	p.Event(apply.Event{Time: t0, Addr: a, Action: plans.Create, Phase: apply.PhaseSubmitting})
	p.Event(ev(time.Second, "processing", 0.4, false))
	p.Event(ev(2*time.Second, "succeed", 1, true))
	want := "image.a: submitting\n" +
		"image.a: processing 40% [1s]\n" +
		"image.a: job done [2s]\n"
	if out.String() != want {
		t.Errorf("progress:\n%s\nwant:\n%s", out.String(), want)
	}
	for _, c := range []struct {
		ev   apply.Event
		want string
	}{
		{ev(0, "processing", 0.4, false), "processing"},
		{ev(0, "succeed", 1, true), "job done"},
		{ev(0, "COMPLETED", 1, true), "job done"},
	} {
		if got := barStatus(c.ev); got != c.want {
			t.Errorf("the bar of a job %s says %q, want %q", c.ev.Status, got, c.want)
		}
	}
}
