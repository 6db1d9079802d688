package command

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genform/genform/internal/simulator"
)

// TestApplyRunsJobsOnOneProcessor: an apply against a service runs its
// jobs with Go on one processor, and gives the others back afterwards;
// GOMAXPROCS set by the user is left alone.
func TestApplyRunsJobsOnOneProcessor(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
	for _, tc := range []struct {
		name    string
		environ []string
		want    int
	}{
		{"default", nil, 1},
		{"GOMAXPROCS set", []string{"GOMAXPROCS=4"}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runtime.GOMAXPROCS(4)
			sim, err := simulator.New(simulator.Options{Latency: 10 * time.Millisecond, Token: "procs-token"})
			if err != nil {
				t.Fatal(err)
			}
			// What the service sees is what the apply's goroutines run on:
			// the handler runs in this process too.
			var mu sync.Mutex
			seen := map[int]int{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					mu.Lock()
					seen[runtime.GOMAXPROCS(0)]++
					mu.Unlock()
				}
				sim.ServeHTTP(w, r)
			}))
			defer srv.Close()
			inDir(t, map[string]string{"main.gen.hcl": "image \"a\" {\n  prompt       = \"a lighthouse\"\n  image_number = 1\n}\n"})
			environ := append([]string{"GENFORM_BASE_URL=" + srv.URL, "GENFORM_TOKEN=procs-token", "GENFORM_IN_AUTOMATION=1", "NO_COLOR=1"}, tc.environ...)
			env, stdout, stderr := cmdEnv(environ...)
			if code := runApply(env, []string{"-auto-approve"}); code != ExitOK || !strings.Contains(stdout.String(), "Apply complete! 1 generated") {
				t.Fatalf("apply: exit %d\n%s%s", code, stdout, stderr)
			}
			if len(seen) != 1 || seen[tc.want] != 1 {
				t.Errorf("the create request was sent with GOMAXPROCS %v, want %d", seen, tc.want)
			}
			if n := runtime.GOMAXPROCS(0); n != 4 {
				t.Errorf("after the apply GOMAXPROCS is %d, want the 4 it was", n)
			}
		})
	}
}
