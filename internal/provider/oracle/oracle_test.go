package oracle_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/genform/genform/internal/simulator/simkit"
)

// latency is how long a simulated job runs in the clients' checks: long
// enough for a client to see it queued and running, and (twenty times
// it, with simkit.SlowMarker) to cancel it while it runs; short enough
// for the whole check to take seconds.
const latency = 400 * time.Millisecond

// clientTimeout bounds one provider's checks. Runway's client waits six
// seconds between two reads of a task, whatever the task does.
const clientTimeout = 90 * time.Second

// TestOfficialClients runs each live provider's official client against
// its simulator, started from the one list of providers: every flow
// genform uses, as testdata/<name>.test.mjs drives it (flows/<name>).
// Then each kind of answer the simulator gave is held to the client's
// TypeScript type of it (answers/<name>): a field the type requires
// that the answer lacks, or a value outside the field's type, fails it.
func TestOfficialClients(t *testing.T) {
	t.Parallel()
	node := nodeOrSkip(t)
	answers := map[string]*answerRecorder{}
	t.Run("flows", func(t *testing.T) {
		for _, r := range liveProviders(t) {
			rec := &answerRecorder{}
			answers[r.Name()] = rec
			t.Run(r.Name(), func(t *testing.T) {
				t.Parallel()
				script := r.Name() + ".test.mjs"
				if _, err := os.Stat(filepath.Join(clientsDir, script)); err != nil {
					t.Fatalf("provider %s has no check by its official client: write testdata/%s", r.Name(), script)
				}
				url := serve(t, r, simkit.Options{Latency: latency}, rec.wrap)
				ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
				defer cancel()
				cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=tap", script)
				cmd.Dir = clientsDir
				cmd.Env = nodeEnv(
					"ORACLE_URL="+url,
					"ORACLE_KEY="+r.Conformance.Key,
					"ORACLE_WRONG_KEY="+r.Conformance.WrongKey,
				)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				start := time.Now()
				err := cmd.Run()
				pass, fail := tapCount(out.Bytes(), "pass"), tapCount(out.Bytes(), "fail")
				if err != nil || fail != 0 || pass <= 0 {
					t.Fatalf("the official client %s against genform's %s simulator: %v (%d passed, %d failed)\n%s",
						clients[r.Name()], r.Name(), err, pass, fail, out.String())
				}
				t.Logf("%s: %d checks passed in %s", clients[r.Name()], pass, time.Since(start).Round(time.Millisecond))
				if testing.Verbose() {
					t.Logf("%s", out.String())
				}
			})
		}
	})
	if t.Failed() {
		return
	}
	checkAnswers(t, node, answers)
}

// tapCount reads the count of name ("pass", "fail") from the summary
// node --test prints, -1 when there is none.
func tapCount(out []byte, name string) int {
	m := regexp.MustCompile(`(?m)^# ` + name + ` (\d+)$`).FindSubmatch(out)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}
