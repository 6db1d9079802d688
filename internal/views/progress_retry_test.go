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
