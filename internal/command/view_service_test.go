package command

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
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
	a := mustAddr("image.a")
	p.event(retryEvent(addrs.Instance{}, 503, 2, 400*time.Millisecond))
	p.event(retryEvent(a, 429, 2, 2*time.Second))
	p.event(retryEvent(a, 429, 3, 2*time.Second))
	p.event(retryEvent(a, 0, 4, 1234*time.Millisecond))
	want := "service: retrying in 400ms (503 Service Unavailable, attempt 2)\n" +
		"image.a: retrying in 2s (429 Too Many Requests, attempt 2)\n" +
		"image.a: retrying in 2s (429 Too Many Requests, attempt 3)\n" +
		"image.a: retrying in 1.2s (unknown failure, attempt 4)\n"
	if out.String() != want {
		t.Errorf("progress:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestRetriesInTheJSONProgress: apply -json has each retry as a progress
// line of phase "retrying" with the retry's fields; the check of the
// service has no address or action.
func TestRetriesInTheJSONProgress(t *testing.T) {
	var out bytes.Buffer
	p := &jsonProgress{enc: json.NewEncoder(&out)}
	p.event(retryEvent(mustAddr("image.a"), 429, 2, 2*time.Second))
	p.event(retryEvent(addrs.Instance{}, 500, 3, time.Second))
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

// TestServiceFailedSaysWhatToFix: an unreachable service or a refused token
// is told once, in one sentence naming the setting to fix; other errors as
// they are.
func TestServiceFailedSaysWhatToFix(t *testing.T) {
	refusal := &service.Error{HTTPStatus: 401, Message: "invalid API key", Code: "H-10001001", Op: "GET /v1/jobs/00000000-0000-0000-0000-000000000000/status"}
	tests := []struct {
		name string
		ep   endpoint
		err  error
		want string
	}{
		{"unreachable", endpoint{Token: "t"},
			fmt.Errorf("checking the service: %w", &service.UnreachableError{Scheme: "http", Addr: "127.0.0.1:9", Reason: "connection refused"}),
			"Error: cannot reach the service at 127.0.0.1:9 (http): connection refused; nothing was submitted. Check GENFORM_BASE_URL (or base_url in the service block, which takes precedence), that the service is running at that address, and the network in between.\n"},
		{"refused token", endpoint{Token: "t"}, fmt.Errorf("checking the service: %w", refusal),
			"Error: the service refused the token: 401 Unauthorized: invalid API key (code H-10001001); nothing was submitted. Set GENFORM_TOKEN (or token in the service block, which takes precedence) to a token the service accepts, then run the command again.\n"},
		{"no token", endpoint{}, refusal,
			"Error: the service wants a token and none is set: 401 Unauthorized: invalid API key (code H-10001001); nothing was submitted. Set GENFORM_TOKEN (or token in the service block, which takes precedence) to a token the service accepts, then run the command again.\n"},
		{"another error", endpoint{Token: "t"}, fmt.Errorf("checking the service: %w", &service.Error{HTTPStatus: 500, Op: "GET /x"}),
			"Error: checking the service: GET /x: 500 Internal Server Error\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, stdout, stderr := cmdEnv()
			if code := serviceFailed(env, tt.ep, tt.err, "nothing was submitted"); code != ExitError {
				t.Errorf("exit %d, want %d", code, ExitError)
			}
			if stderr.String() != tt.want || stdout.Len() != 0 {
				t.Errorf("stderr:\n%s\nwant:\n%s(stdout %q)", stderr, tt.want, stdout)
			}
		})
	}
}
