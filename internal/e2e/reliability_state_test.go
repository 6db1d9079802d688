// A user's state file is damaged, written by a newer genform, or holds
// records that lead outside the working directory (a bad merge, a file
// committed by someone else), or the working directory links its output or
// state directory elsewhere: every command refuses with a message that
// says what to do, and nothing outside the working directory is read,
// written, moved or deleted. A state written by an older genform, before
// the state named its service, is used as it is.

package e2e

import (
	"bytes"
	"encoding/base64"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/genform/genform/internal/e2e/harness"
	"github.com/genform/genform/internal/simulator"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/filetest"
)

// appliedWorkspace applies a small configuration once and returns a
// function that gives each caller a fresh copy of the result: the working
// directory with its state file and outputs.
func appliedWorkspace(t *testing.T, sim *simulator.Instance, env []string) func(t *testing.T) workspace {
	t.Helper()
	tmpl := newWorkspace(t, map[string]string{"main.gen.hcl": `
image "a" {
  prompt       = "an apple"
  image_number = 2
}

image "b" {
  prompt       = "a pear"
  image_number = 1
}
`})
	if r := genform(t, tmpl.dir, env, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("%s", r)
	}
	return func(t *testing.T) workspace {
		ws := newWorkspace(t, nil)
		copyTree(t, tmpl.dir, ws.dir)
		return ws
	}
}

// stateTest begins a test of the state that runs genform (what says
// how much, when -short skips it), in parallel with the others, against
// a stateSim of its own; it returns the simulator and the environment
// that points genform at it.
func stateTest(t *testing.T, what string) (*simulator.Instance, []string) {
	parallelSlow(t, what)
	sim := stateSim(t)
	return sim, serviceEnv(sim.URL, fakeToken)
}

// stateSim is a simulator whose jobs take 200ms, taking fakeToken.
func stateSim(t *testing.T) *simulator.Instance {
	return startSim(t, simulator.Options{Token: fakeToken, Latency: 200 * time.Millisecond})
}

// TestBadStateFile damages the state file in each way a disk, a merge or a
// newer genform can, and runs every command that reads it: each refuses
// with a message that names the file and says what to do, and nothing is
// lost, changed, generated or written outside the working directory.
func TestBadStateFile(t *testing.T) {
	sim, env := stateTest(t, "runs genform many times")
	fresh := appliedWorkspace(t, sim, env)
	jobsBefore := len(sim.Server.Jobs().Jobs)

	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
		want   []string
	}{
		{
			name: "random bytes",
			damage: func(t *testing.T, path string) {
				rng := rand.New(rand.NewPCG(1, 2))
				b := make([]byte, 32<<10)
				for i := range b {
					b[i] = byte(rng.Uint32())
				}
				writeFile(t, path, b)
			},
			want: []string{"is not readable", "not a bbolt database", "restore it from version control or a backup"},
		},
		{
			name: "a text file",
			damage: func(t *testing.T, path string) {
				writeFile(t, path, []byte("<<<<<<< HEAD\nthis is not a state file\n=======\n>>>>>>> branch\n"))
			},
			want: []string{"is not readable", "restore it from version control or a backup"},
		},
		{
			name: "truncated to half",
			damage: func(t *testing.T, path string) {
				b := filetest.ReadFile(t, path)
				writeFile(t, path, b[:len(b)/2])
			},
			want: []string{"is not readable", "truncated"},
		},
		{
			name: "written by a newer genform",
			damage: func(t *testing.T, path string) {
				filetest.UpdateBolt(t, path, func(tx *bolt.Tx) error {
					return tx.Bucket([]byte("genform")).Bucket([]byte("meta")).Put([]byte("schema_version"), []byte(fmt.Sprint(statefile.SchemaVersion+1)))
				})
			},
			want: []string{fmt.Sprintf("written by a newer genform (schema %d", statefile.SchemaVersion+1), "upgrade genform"},
		},
		{
			name:   "one record damaged",
			damage: func(t *testing.T, path string) { damageRecord(t, path, "image.a") },
			want:   []string{"resource record image.a is corrupt", "genform state rm image.a"},
		},
	}
	commands := [][]string{
		{"plan"},
		{"apply", "-auto-approve"},
		{"destroy", "-auto-approve"},
		{"show"},
		{"state", "list"},
		{"gallery"},
	}
	// Checked once every subtest has run.
	t.Cleanup(func() {
		if n := len(sim.Server.Jobs().Jobs); n != jobsBefore {
			t.Errorf("the simulator made %d new jobs from damaged states", n-jobsBefore)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws := fresh(t)
			tt.damage(t, ws.statePath())
			before := treeSums(t, ws.dir)
			for _, args := range commands {
				r := genform(t, ws.dir, env, args...)
				if r.code != 1 {
					t.Errorf("exit %d, want 1:\n%s", r.code, r)
					continue
				}
				for _, want := range append(tt.want, "state file .genform/state.db") {
					if !strings.Contains(r.stderr, want) {
						t.Errorf("genform %s: stderr does not say %q:\n%s", strings.Join(args, " "), want, r.stderr)
					}
				}
			}
			after := treeSums(t, ws.dir)
			delete(after, ".genform/state.db.lock.info") // the last holder's name
			if diff := cmpSums(before, after); diff != "" {
				t.Errorf("files changed:\n%s", diff)
			}
			ws.checkNothingOutside(t)
		})
	}
}

func cmpSums(before, after map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(before)) {
		switch a, ok := after[k]; {
		case !ok:
			fmt.Fprintf(&b, "  %s was removed\n", k)
		case a != before[k]:
			fmt.Fprintf(&b, "  %s was changed\n", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(after)) {
		if _, ok := before[k]; !ok {
			fmt.Fprintf(&b, "  %s was added\n", k)
		}
	}
	return b.String()
}

// damageRecord replaces the resource record of addr with one that breaks
// off in the length of its second field, the address, as a bad sector or a
// bad merge leaves it; the rest of the file stays sound.
func damageRecord(t testing.TB, path, addr string) {
	t.Helper()
	filetest.UpdateBolt(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("genform")).Bucket([]byte("resources")).Put([]byte(addr), []byte{0x08, 0x01, 0x12, 0xff, 0xff})
	})
}

// TestStatePathsStayInside gives the state file records whose output paths
// or directory lead outside the working directory, as a state file
// committed by someone else could, written past genform's own checks: every
// command refuses the record, and none deletes, moves, reads or publishes
// the file outside.
func TestStatePathsStayInside(t *testing.T) {
	sim, env := stateTest(t, "runs genform many times")
	fresh := appliedWorkspace(t, sim, env)

	const victimText = "a file of the user's, outside the working directory\n"
	// The record is patched in place, each string replaced by one of the
	// same length so the encoding stays well-formed: "generated/image/a"
	// and its output paths become paths that clean to "..".
	patches := map[string][][2]string{
		"output path": {{"generated/image/a/0.png", "./././././../victim.txt"}},
		"directory and output path": {
			{"\x11generated/image/a", "\x11.//////////////.."},
			{"generated/image/a/0.png", "./././././../victim.txt"},
		},
	}
	configs := map[string]string{
		"kept in the configuration": "",
		"deleted from the configuration": `image "b" {
  prompt       = "a pear"
  image_number = 1
}
`,
	}
	for pname, patch := range patches {
		for cname, config := range configs {
			t.Run(pname+", "+cname, func(t *testing.T) {
				t.Parallel()
				ws := fresh(t)
				victim := filepath.Join(ws.parent, "victim.txt")
				writeFile(t, victim, []byte(victimText))
				filetest.UpdateBolt(t, ws.statePath(), func(tx *bolt.Tx) error {
					b := tx.Bucket([]byte("genform")).Bucket([]byte("resources"))
					rec := bytes.Clone(b.Get([]byte("image.a")))
					for _, p := range patch {
						if !bytes.Contains(rec, []byte(p[0])) {
							t.Fatalf("the record holds no %q", p[0])
						}
						rec = bytes.Replace(rec, []byte(p[0]), []byte(p[1]), 1)
					}
					return b.Put([]byte("image.a"), rec)
				})
				if config != "" {
					writeFile(t, filepath.Join(ws.dir, "main.gen.hcl"), []byte(config))
				}
				for _, args := range [][]string{
					{"plan"},
					{"gallery", "-out=gallery.html"},
					{"apply", "-auto-approve"},
					{"destroy", "-auto-approve"},
					{"show"},
				} {
					r := genform(t, ws.dir, env, args...)
					if r.code != 1 || !strings.Contains(r.stderr, "resource record image.a is corrupt") || !strings.Contains(r.stderr, "leads outside the working directory") {
						t.Errorf("want a refusal naming the record and why:\n%s", r)
					}
				}
				if b, err := os.ReadFile(victim); err != nil || string(b) != victimText {
					t.Errorf("the file outside the working directory was deleted, moved or changed (%v)", err)
				}
				if g, err := os.ReadFile(filepath.Join(ws.dir, "gallery.html")); err == nil {
					if bytes.Contains(g, []byte(victimText)) || bytes.Contains(g, []byte(base64.StdEncoding.EncodeToString([]byte(victimText)))) {
						t.Errorf("the gallery publishes the file outside the working directory")
					}
				}
				ws.checkNothingOutside(t, "victim.txt")
			})
		}
	}
}

// TestCorruptRecordRemedy follows the advice every corrupt-record error
// gives, "forget the resource with: genform state rm ADDR": it must work,
// and the next plan takes the forgotten resource's generation back from
// the history (its entry is another record, undamaged) while keeping the
// others.
func TestCorruptRecordRemedy(t *testing.T) {
	sim, env := stateTest(t, "runs genform many times")
	ws := appliedWorkspace(t, sim, env)(t)
	damageRecord(t, ws.statePath(), "image.a")
	r := genform(t, ws.dir, env, "plan")
	if r.code != 1 || !strings.Contains(r.stderr, "forget the resource with: genform state rm image.a") {
		t.Fatalf("want the advice to forget image.a:\n%s", r)
	}
	if r := genform(t, ws.dir, env, "state", "rm", "image.a"); r.code != 0 || !strings.Contains(r.stdout, "Removed image.a") {
		t.Fatalf("the advised command fails:\n%s", r)
	}
	r = genform(t, ws.dir, env, "plan")
	if r.code != 0 || !strings.Contains(r.stdout, "image.a will be restored from the history") || strings.Contains(r.stdout, "image.b will") {
		t.Fatalf("after state rm, plan should restore image.a and leave image.b alone:\n%s", r)
	}
}

// TestStateFromBeforeTheServiceKey: a state written by a genform that did
// not record the service is used as it is (the service is not known yet),
// and names the service from the first apply that records something
// against it; from then on another service is refused.
func TestStateFromBeforeTheServiceKey(t *testing.T) {
	sim, env := stateTest(t, "runs genform many times")
	other := stateSim(t)
	ws := appliedWorkspace(t, sim, env)(t)
	service := func() string {
		t.Helper()
		snap, err := harness.ReadCheckedState(ws.statePath(), "test")
		if err != nil {
			t.Fatal(err)
		}
		return snap.Meta.Service
	}
	if got := service(); got != sim.URL {
		t.Fatalf("after the first apply the state names service %q, want %s", got, sim.URL)
	}
	// As a genform from before the key left the file.
	filetest.UpdateBolt(t, ws.statePath(), func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("genform")).Bucket([]byte("meta")).Delete([]byte("service"))
	})

	// Plans, and an apply with nothing to do, work and record nothing.
	if r := genform(t, ws.dir, env, "plan", "-detailed-exitcode"); r.code != 0 {
		t.Fatalf("a state without a service does not plan clean:\n%s", r)
	}
	if r := genform(t, ws.dir, env, "apply", "-auto-approve"); r.code != 0 || !strings.Contains(r.stdout, "No changes") {
		t.Fatalf("%s", r)
	}
	if got := service(); got != "" {
		t.Fatalf("an apply that changed nothing recorded service %q", got)
	}

	// The next apply that generates records it.
	writeFile(t, filepath.Join(ws.dir, "more.gen.hcl"), []byte("image \"c\" {\n  prompt       = \"a plum\"\n  image_number = 1\n}\n"))
	if r := genform(t, ws.dir, env, "apply", "-auto-approve"); r.code != 0 || !strings.Contains(r.stdout, "1 generated") {
		t.Fatalf("%s", r)
	}
	if got := service(); got != sim.URL {
		t.Fatalf("after an apply that generated, the state names service %q, want %s", got, sim.URL)
	}
	jobs := len(other.Server.Jobs().Jobs)
	r := genform(t, ws.dir, serviceEnv(other.URL, fakeToken), "apply", "-auto-approve")
	if r.code != 1 || !strings.Contains(r.stderr, "the state was made with service "+sim.URL+", but this configuration uses service "+other.URL) {
		t.Fatalf("another service is not refused:\n%s", r)
	}
	if n := len(other.Server.Jobs().Jobs); n != jobs {
		t.Errorf("the refused apply made %d jobs on the other service", n-jobs)
	}
}

// copyTree copies the regular files under src into dst.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLinkedDirsStayInside makes the output directory and the state
// directory links to directories outside the working directory, as a
// repository can hold them: apply must refuse rather than write there.
func TestLinkedDirsStayInside(t *testing.T) {
	_, env := stateTest(t, "runs genform")
	for _, link := range []string{"generated", ".genform", "pics"} {
		t.Run(link, func(t *testing.T) {
			t.Parallel()
			ws := newWorkspace(t, map[string]string{"main.gen.hcl": anApple + `
image "b" {
  prompt       = "a pear"
  image_number = 1
  dir          = "pics/pears"
}
`})
			outside := filepath.Join(ws.parent, "outside")
			if err := os.Mkdir(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join("..", "outside"), filepath.Join(ws.dir, link)); err != nil {
				t.Skipf("no symbolic links here: %v", err)
			}
			r := genform(t, ws.dir, env, "apply", "-auto-approve")
			if r.code != 1 || !strings.Contains(r.stderr, link) || !strings.Contains(r.stderr, "outside the working directory") {
				t.Errorf("want apply to refuse the link %s:\n%s", link, r)
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Errorf("apply wrote %d entries through the link into %s", len(entries), outside)
			}
		})
	}
}

var mutants = flag.Int("mutate.n", 30, "TestDamagedPages: how many damaged copies of the state file to run the commands on")

// TestDamagedPages damages a real state file's pages the way a bad disk, a
// bad copy or a filesystem bug does (two pages swapped, a page zeroed, a
// page overwritten with random bytes: a deterministic sequence of them) and
// runs plan -detailed-exitcode, show and apply on each copy. bbolt trusts
// its pages and panics on such a file (the process then exits 2, which plan
// -detailed-exitcode reports as "changes present"); genform must instead
// refuse it with exit 1 and a message naming the file and how to restore
// it, or, when the damage is in pages the state does not use, work as
// before. Either way the file keeps its bytes and nothing is generated.
//
// The two meta pages (0 and 1) are left alone: they carry checksums, and
// one that fails its checksum makes bbolt use the other, the state as of
// the commit before, which is its designed recovery from a commit torn by
// a power cut (a plan of that state may rightly show changes).
func TestDamagedPages(t *testing.T) {
	t.Parallel()
	sim := startSim(t, simulator.Options{Token: fakeToken, Latency: 50 * time.Millisecond, RPM: 100000})
	env := serviceEnv(sim.URL, fakeToken)
	// Enough records for branch pages, several leaves and a record larger
	// than a page (its prompt is long), so every kind of page is damaged.
	tmpl := newWorkspace(t, map[string]string{"main.gen.hcl": `
service {
  requests_per_minute = 100000
  parallelism         = 25
}

image "tile" {
  count        = 24
  prompt       = "tile number ${count.index}, ${join(" ", [for i in range(count.index * 8) : "word${i}"])}"
  image_number = 1
}

image "big" {
  prompt       = "${join(" ", [for i in range(300) : "w${i}"])}"
  image_number = 1
}
`})
	if r := genform(t, tmpl.dir, env, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("%s", r)
	}
	jobsBefore := len(sim.Server.Jobs().Jobs)
	want := genform(t, tmpl.dir, env, "show", "-json")
	if want.code != 0 {
		t.Fatalf("%s", want)
	}
	pageSize, pages := boltPages(t, tmpl.statePath())
	t.Logf("state file: %d pages of %d bytes in use", pages, pageSize)
	if pages < 8 {
		t.Fatalf("the state file uses only %d pages: too few to damage in interesting ways", pages)
	}

	rng := rand.New(rand.NewPCG(7, 11))
	data := pages - 2 // pages 2 .. pages-1
	var refused, worked, inJSON atomic.Int32
	for i := range *mutants {
		// Drawn here, in order, so the sequence does not depend on how the
		// subtests are scheduled.
		p, q := 2+rng.IntN(data), 2+rng.IntN(data-1)
		if q >= p {
			q++
		}
		noise := make([]byte, pageSize)
		for j := range noise {
			noise[j] = byte(rng.Uint32())
		}
		var name string
		var damage func(b []byte)
		page := func(b []byte, n int) []byte { return b[n*pageSize : (n+1)*pageSize] }
		switch i % 3 {
		case 0:
			name = fmt.Sprintf("%d swap pages %d and %d", i, p, q)
			damage = func(b []byte) {
				tmp := bytes.Clone(page(b, p))
				copy(page(b, p), page(b, q))
				copy(page(b, q), tmp)
			}
		case 1:
			name = fmt.Sprintf("%d zero page %d", i, p)
			damage = func(b []byte) { clear(page(b, p)) }
		default:
			name = fmt.Sprintf("%d random page %d", i, p)
			damage = func(b []byte) { copy(page(b, p), noise) }
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ws := newWorkspace(t, nil)
			copyTree(t, tmpl.dir, ws.dir)
			b := filetest.ReadFile(t, ws.statePath())
			damage(b)
			writeFile(t, ws.statePath(), b)
			sum := harness.SHA256(b)
			ok := true
			for _, args := range [][]string{{"plan", "-detailed-exitcode"}, {"show"}, {"apply", "-auto-approve"}} {
				r := genform(t, ws.dir, env, args...)
				switch {
				case strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine "):
					t.Errorf("genform crashed:\n%s", r)
				case r.code == 1:
					ok = false
					for _, want := range []string{"state file .genform/state.db", "restore"} {
						if !strings.Contains(r.stderr, want) {
							t.Errorf("the refusal does not say %q:\n%s", want, r)
						}
					}
				case r.code != 0:
					t.Errorf("exit %d, want 0 or 1:\n%s", r.code, r)
				case args[0] != "show" && !strings.Contains(r.stdout, "No changes"):
					t.Errorf("a state that still reads must plan no changes:\n%s", r)
				}
			}
			if got := harness.SHA256(filetest.ReadFile(t, ws.statePath())); got != sum {
				t.Errorf("the damaged state file was changed")
			}
			if !ok {
				refused.Add(1)
				return
			}
			// A copy these commands read is the state as it was, unless
			// the damage is inside a record's stored JSON (its request or
			// creation detail), which only show -json reads whole: it must
			// then say so.
			switch r := genform(t, ws.dir, env, "show", "-json"); {
			case r.code == 0 && r.stdout == want.stdout:
				worked.Add(1)
			case r.code == 1 && strings.Contains(r.stderr, "state file .genform/state.db: resource record") && strings.Contains(r.stderr, "is not JSON, so the file is damaged; restore"):
				inJSON.Add(1)
			default:
				t.Errorf("the damaged copy reads differently from the state:\n%s", r)
			}
		})
	}
	t.Cleanup(func() {
		t.Logf("%d damaged copies: %d refused with a message; %d read as before (the damage was in pages not in use); %d damaged inside a record's JSON, which only show -json reads and refuses", *mutants, refused.Load(), worked.Load(), inJSON.Load())
		if n := len(sim.Server.Jobs().Jobs); n != jobsBefore {
			t.Errorf("the simulator made %d new jobs from damaged states", n-jobsBefore)
		}
	})
}

// boltPages reads a bbolt file's page size and its high-water mark: the
// number of pages its latest commit uses.
func boltPages(t testing.TB, path string) (pageSize, pages int) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pageSize = db.Info().PageSize
	if err := db.View(func(tx *bolt.Tx) error {
		pages = int(tx.Size()) / pageSize
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return pageSize, pages
}
