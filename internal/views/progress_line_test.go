package views

import (
	"bytes"
	"testing"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/service"
	"github.com/genform/genform/reconcile/apply"
	"github.com/genform/genform/reconcile/plans"
)

func retryEvent(addr addrs.Instance, status, attempt int, wait time.Duration) apply.Event {
	return apply.Event{
		Time: time.Now(), Addr: addr, Action: plans.Create, Phase: apply.PhaseRetrying,
		Retry: &service.RetryInfo{Op: "POST /v1/jobs/text2image", Attempt: attempt, MaxAttempts: 9, HTTPStatus: status, Wait: wait},
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
