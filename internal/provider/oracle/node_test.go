package oracle_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/all"
	"github.com/genform/genform/internal/simulator/simkit"
)

// clientsDir is where the official clients are installed (npm ci, by
// make oracle) and where their checks are.
const clientsDir = "testdata"

// clients are the pinned official clients, by the name of the provider
// each is the client of, as testdata/package.json names them.
var clients = map[string]string{
	"fal":       "@fal-ai/client",
	"replicate": "replicate",
	"openai":    "openai",
	"runway":    "@runwayml/sdk",
	"luma":      "lumaai",
}

// withoutClient are the live providers no official client on the npm
// registry speaks, with why: their simulators follow the documents alone.
var withoutClient = map[string]string{
	"luma_agents": "luma-agents, the official client of Luma's Agents API, is not on the npm registry (404 on 2026-12-07)",
}

// nodeOrSkip returns the path of node, skipping the test when node is not
// installed, and fails it when the clients are not installed: `make test`
// installs both (make oracle).
func nodeOrSkip(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the official clients' checks need Node.js and npm (make oracle installs Debian's nodejs and npm, then the pinned clients)")
	}
	for _, pkg := range append(mapsValues(clients), "typescript") {
		if _, err := os.Stat(filepath.Join(clientsDir, "node_modules", pkg, "package.json")); err != nil {
			t.Fatalf("the official client %s is not installed in internal/provider/oracle/testdata/node_modules: run `make oracle` (npm ci there installs the pinned clients)", pkg)
		}
	}
	return node
}

func mapsValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// liveProviders are the providers of the one list that have an official
// client: all but the reference service, which is genform's own.
func liveProviders(t *testing.T) []*provider.Registration {
	t.Helper()
	var out []*provider.Registration
	for _, r := range all.Providers {
		if r.Table.Service {
			continue
		}
		if why, ok := withoutClient[r.Name()]; ok {
			t.Logf("provider %s is not checked by an official client: %s", r.Name(), why)
			continue
		}
		if _, ok := clients[r.Name()]; !ok {
			t.Errorf("provider %s has no official client in the oracle's checks: add it to testdata/package.json (pinned, npm install --save-exact, then commit package-lock.json), to clients, and write testdata/%s.test.mjs", r.Name(), r.Name())
			continue
		}
		out = append(out, r)
	}
	return out
}

// serve starts r's simulator, from its registration, on the loopback:
// it accepts r's conformance key alone, and its jobs take latency
// (twenty times that with simkit.SlowMarker in the prompt). wrap, when
// set, is served in front of it. It returns the simulator's base URL.
func serve(t *testing.T, r *provider.Registration, opts simkit.Options, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	opts.Token = r.Conformance.Key
	sim, err := r.Simulator(opts)
	if err != nil {
		t.Fatal(err)
	}
	var h simkit.Handler = sim
	if wrap != nil {
		h = wrapped{Handler: sim, front: wrap(sim)}
	}
	inst, err := simkit.Listen("127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := inst.Close(); err != nil {
			t.Errorf("closing the %s simulator: %v", r.Name(), err)
		}
	})
	return inst.URL
}

// wrapped is a simulator with a handler in front of it.
type wrapped struct {
	simkit.Handler
	front http.Handler
}

func (w wrapped) ServeHTTP(rw http.ResponseWriter, r *http.Request) { w.front.ServeHTTP(rw, r) }

// nodeEnv is the environment node runs in: this process's, without any
// provider's key or address, so that neither a real key in the
// developer's environment nor a base URL there reaches a client (each is
// given the simulator's address and key explicitly), plus extra.
func nodeEnv(extra ...string) []string {
	drop := []string{"OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "RUNWAYML_BASE_URL", "LUMAAI_BASE_URL",
		"FAL_KEY", "FAL_KEY_ID", "FAL_KEY_SECRET", "NODE_OPTIONS", "NODE_TEST_CONTEXT"}
	for _, r := range all.Providers {
		if r.Table.KeyEnv != "" {
			drop = append(drop, r.Table.KeyEnv)
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, d := range drop {
			if name == d {
				keep = false
			}
		}
		if keep {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// tsDiag is one of tsc's diagnostics: its file, line and text.
type tsDiag struct {
	file string
	line int
	text string
}

// typecheck runs the pinned TypeScript compiler, --strict and emitting
// nothing, over sources (file name to source) in a directory of their
// own that reaches the installed clients, and returns its diagnostics
// and its whole output. It fails the test when tsc fails without a
// diagnostic of these files.
func typecheck(t *testing.T, node string, sources map[string]string) ([]tsDiag, string) {
	t.Helper()
	dir := t.TempDir()
	modules, err := filepath.Abs(filepath.Join(clientsDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	var names []string
	for name, src := range sources {
		names = append(names, name)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(names)
	cfg, err := json.Marshal(map[string]any{
		"compilerOptions": map[string]any{
			"strict": true, "noEmit": true, "target": "es2022",
			"module": "nodenext", "moduleResolution": "nodenext",
			// The clients' own declarations are theirs to check.
			"skipLibCheck": true,
		},
		"files": names,
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{"tsconfig.json": cfg, "package.json": []byte(`{"type":"module","private":true}`)} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(modules, "typescript", "bin", "tsc"), "-p", dir)
	cmd.Dir = dir
	cmd.Env = nodeEnv()
	out, err := cmd.CombinedOutput()
	var diags []tsDiag
	for _, m := range regexp.MustCompile(`(?m)^(\S+\.ts)\((\d+),\d+\): (error TS\d+: .*(?:\n {2,}.*)*)`).FindAllSubmatch(out, -1) {
		n, _ := strconv.Atoi(string(m[2]))
		diags = append(diags, tsDiag{file: string(m[1]), line: n, text: string(m[3])})
	}
	if err != nil && len(diags) == 0 {
		t.Fatalf("tsc: %v\n%s", err, out)
	}
	return diags, string(out)
}
