package command

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genform/genform/internal/simulator"
	"github.com/genform/genform/internal/simulator/simkit/simtest"
	"github.com/genform/genform/internal/views"
)

// lockedBuffer is an io.Writer safe to read while another goroutine
// writes to it (the simulator, the browser).
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func simEnv() (*Env, *lockedBuffer, *lockedBuffer) {
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
	return &Env{
		Streams: views.Streams{Stdout: out, Stderr: errOut, Getenv: func(string) string { return "" }},
		Environ: func() []string { return nil },
	}, out, errOut
}

func TestSimFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-fail-rate=1.5"}, "-fail-rate is not a fraction from 0 to 1"},
		{[]string{"-error-rate=-0.1"}, "-error-rate is not a fraction"},
		{[]string{"-truncate-rate=NaN"}, "-truncate-rate is not a fraction"},
		{[]string{"-latency=0s"}, "-latency is not a positive duration"},
		{[]string{"-url-ttl=-1m"}, "-url-ttl is not a positive duration"},
		{[]string{"-max-concurrent=0"}, "-max-concurrent is below 1: pass a limit of at least 1"},
		{[]string{"-rpm=-5"}, "-rpm is below 1"},
		{[]string{"-addr="}, "-addr is empty"},
		{[]string{"extra"}, "sim takes no arguments, and the 1st argument is one too many"},
		{[]string{"-latency=soon"}, "invalid value for -latency: it takes a duration"},
		{[]string{"-addr=256.0.0.1:1"}, "starting the simulator"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			env, out, errOut := simEnv()
			if code := serveSim(context.Background(), env, tt.args); code != ExitError {
				t.Errorf("exit code %d, want %d", code, ExitError)
			}
			if !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", errOut.String(), tt.want)
			}
			if out.String() != "" {
				t.Errorf("stdout %q, want nothing", out.String())
			}
		})
	}
}

// startSim runs genform sim with args until the returned stop is called,
// and returns its base URL from the line it prints.
func startSim(t *testing.T, args ...string) (url string, stop func() (int, string)) {
	t.Helper()
	env, out, errOut := simEnv()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- serveSim(ctx, env, append([]string{"-addr=127.0.0.1:0"}, args...)) }()
	for {
		if line, ok := strings.CutPrefix(out.String(), "genform sim: listening on "); ok && strings.HasSuffix(line, "\n") {
			url = strings.TrimSpace(line)
			break
		}
		select {
		case code := <-done:
			t.Fatalf("genform sim exited with %d before listening: %s", code, errOut.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return url, func() (int, string) {
		cancel()
		return <-done, errOut.String()
	}
}

func simRequest(t *testing.T, method, url, token, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func simJobs(t *testing.T, url string) simulator.JobsReport {
	t.Helper()
	rep, err := simtest.Report(url)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestSimServesUntilStopped(t *testing.T) {
	data := t.TempDir()
	url, stop := startSim(t, "-token=T", "-data="+data, "-latency=50ms", "-v")
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Errorf("printed URL %q, want http://127.0.0.1:PORT", url)
	}
	create := url + "/v1/jobs/text2image"
	if code := simRequest(t, "POST", create, "", `{"prompt":"a"}`); code != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", code)
	}
	if code := simRequest(t, "POST", create, "wrong", `{"prompt":"a"}`); code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d, want 401", code)
	}
	if code := simRequest(t, "POST", create, "T", `{"prompt":"a","config":{"image_number":1}}`); code != http.StatusOK {
		t.Errorf("create: %d, want 200", code)
	}
	code, stderr := stop()
	if code != ExitOK {
		t.Errorf("exit code %d after stop, want 0; stderr: %s", code, stderr)
	}
	if !strings.Contains(stderr, "POST /v1/jobs/text2image 200") {
		t.Errorf("-v did not log the request: %s", stderr)
	}
	if _, err := http.Get(url + "/_sim/jobs"); err == nil {
		t.Errorf("still answering after stop")
	}

	// -data keeps the job for the next run.
	url, stop = startSim(t, "-data="+data)
	rep := simJobs(t, url)
	if len(rep.Jobs) != 1 || rep.Jobs[0].Endpoint != "/v1/jobs/text2image" {
		t.Errorf("after a restart with the same -data: %+v", rep.Jobs)
	}
	if code, _ := stop(); code != ExitOK {
		t.Errorf("second run exit code %d", code)
	}
}
