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

	"github.com/genform/genform/internal/provider"
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

// TestOfficialClients makes the providers' official clients the judges
// of genform's simulators and of genform's requests, for every live
// provider of the one list:
//
//   - run/client/<name>: the client drives the simulator through every
//     flow genform uses, as testdata/<name>.test.mjs does it;
//   - run/genform/<name>: genform's adapter sends the simulator what
//     genform builds for every model of the provider's table, and its
//     conformance and live requests (sentByGenform);
//   - requests/<name>: tsc --strict holds each body that arrived to the
//     client's type of its endpoint's parameters;
//   - answers/<name>: tsc --strict holds each kind of answer the
//     simulator gave the client to the client's type of it.
//
// The two checks of types are one run of tsc.
func TestOfficialClients(t *testing.T) {
	node := nodeOrSkip(t)
	providers := liveProviders(t)
	answers := make([]*answerRecorder, len(providers))
	requests := make([]*requestFile, len(providers))
	t.Run("run", func(t *testing.T) {
		for i, r := range providers {
			answers[i] = &answerRecorder{}
			t.Run("client/"+r.Name(), func(t *testing.T) {
				t.Parallel()
				runClient(t, node, r, answers[i])
			})
			t.Run("genform/"+r.Name(), func(t *testing.T) {
				t.Parallel()
				requests[i] = requestFileOf(t, r)
			})
		}
	})
	if t.Failed() {
		return
	}
	sources := map[string]string{}
	var reqFiles []*requestFile
	var ansFiles []*answerFile
	for i, r := range providers {
		if f := requests[i]; f != nil {
			reqFiles = append(reqFiles, f)
			sources[f.name] = f.src
		}
		if f := answerFileOf(t, r.Name(), answers[i]); f != nil {
			ansFiles = append(ansFiles, f)
			sources[f.name] = f.src
		}
	}
	if t.Failed() {
		return
	}
	diags, out := typecheck(t, node, sources)
	reportRequests(t, reqFiles, diags, out)
	reportAnswers(t, ansFiles, diags)
}

// runClient runs provider r's official client against its simulator,
// served with rec in front of it, under node --test.
func runClient(t *testing.T, node string, r *provider.Registration, rec *answerRecorder) {
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
