package main

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/genform/genform/internal/provider/all"
	"github.com/genform/genform/internal/simulator"
	"github.com/genform/genform/internal/simulator/simkit"
	"github.com/genform/genform/internal/simulator/simkit/simtest"
)

// A script that restarts a simulator at its address (sim-start or
// provider-sim with -addr, and -data: the same service restarted) takes
// the address from free-port, which holds the port for the whole script:
// no other process on the machine can take it between the stop and the
// start, nor between free-port and the first start.

type portsKey struct{}

// heldPorts are the loopback ports free-port holds for a script, by
// address.
type heldPorts struct {
	mu    sync.Mutex
	ports map[string]*simtest.Port
}

func portsOf(ts *testscript.TestScript) *heldPorts { return ts.Value(portsKey{}).(*heldPorts) }

// hold holds a free loopback port for the script.
func (h *heldPorts) hold() (*simtest.Port, error) {
	p, err := simtest.HoldPort()
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ports == nil {
		h.ports = map[string]*simtest.Port{}
	}
	h.ports[p.Addr] = p
	return p, nil
}

// listen is a listener at addr for a simulator: on the held socket when
// free-port holds addr's port, which closing the listener keeps held
// (connections are refused until the next listener); a new one
// otherwise.
func (h *heldPorts) listen(addr string) (net.Listener, error) {
	h.mu.Lock()
	p := h.ports[addr]
	h.mu.Unlock()
	if p != nil {
		return p.Listen()
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("simulator: listening on %s: %w", addr, err)
	}
	return ln, nil
}

func (h *heldPorts) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.ports {
		p.Close()
	}
	h.ports = nil
}

// free-port [-release] VAR sets VAR to a loopback TCP port that nothing
// listens on, and holds it for the rest of the script: a connection to it
// is refused until a simulator is started there (sim-start or
// provider-sim -addr 127.0.0.1:$VAR), and again once it stops, and no
// other process can take it. With -release the port is let go at once,
// for a program the script runs (exec) to listen on; another process may
// take it in between.
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	fs := commandFlags(ts, neg, "free-port")
	release := fs.Bool("release", false, "")
	ts.Check(fs.Parse(args))
	if fs.NArg() != 1 {
		ts.Fatalf("usage: free-port [-release] VAR")
	}
	if *release {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		ts.Setenv(fs.Arg(0), strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
		l.Close()
		return
	}
	p, err := portsOf(ts).hold()
	ts.Check(err)
	_, port, err := net.SplitHostPort(p.Addr)
	ts.Check(err)
	ts.Setenv(fs.Arg(0), port)
}

// TestSimRestartKeepsItsPort: a simulator that sim-start or provider-sim
// restarts at a port free-port holds is served there again, with the jobs
// of its data directory, even though another process tried to take the
// port while it was stopped; meanwhile a connection is refused, as by a
// service that is down.
func TestSimRestartKeepsItsPort(t *testing.T) {
	ports := &heldPorts{}
	defer ports.close()
	// restart starts a simulator at a held port with start, makes a job
	// on it with makeJob, stops it with stop, and starts it again.
	restart := func(t *testing.T, start func(addr string) (url string), makeJob func(url string), stop func()) {
		p, err := ports.hold()
		if err != nil {
			t.Fatal(err)
		}
		url := start(p.Addr)
		if url != "http://"+p.Addr {
			t.Fatalf("started at %s, want %s", url, p.Addr)
		}
		makeJob(url)
		stop()
		if c, err := net.Dial("tcp", p.Addr); err == nil {
			c.Close()
			t.Error("a stopped simulator's port took a connection")
		}
		// Another process tries to take the port in between.
		if other, err := net.Listen("tcp", p.Addr); err == nil {
			defer other.Close()
		}
		if again := start(p.Addr); again != url {
			t.Fatalf("restarted at %s, want %s", again, url)
		}
		rep, err := simtest.Report(url)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Jobs) != 1 {
			t.Errorf("the restarted simulator holds %d jobs, want the 1 made before", len(rep.Jobs))
		}
		stop()
	}
	t.Run("sim-start", func(t *testing.T) {
		h := &simHolder{ports: ports}
		opts := simulator.Options{Token: "t", DataDir: t.TempDir()}
		restart(t, func(addr string) string {
			if err := h.start(addr, opts); err != nil {
				t.Fatalf("sim-start -addr %s: %v", addr, err)
			}
			return h.url()
		}, func(url string) {
			create(t, url+"/v1/jobs/text2image", "Bearer t", `{"prompt":"kept"}`)
		}, h.close)
	})
	t.Run("provider-sim", func(t *testing.T) {
		p := &providerSims{ports: ports}
		opts := simkit.Options{Token: "k", DataDir: t.TempDir()}
		var inst *simkit.Instance
		restart(t, func(addr string) string {
			var err error
			if inst, err = p.start(addr, all.Lookup("fal").Simulator, opts); err != nil {
				t.Fatalf("provider-sim fal -addr %s: %v", addr, err)
			}
			return inst.URL
		}, func(url string) {
			create(t, url+"/fal-ai/flux/dev", "Key k", `{"prompt":"kept"}`)
		}, func() { inst.Close() })
	})
}

// create sends a create to url with the Authorization header auth,
// failing unless it is answered 200.
func create(t *testing.T, url, auth, body string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", url, resp.Status)
	}
}
