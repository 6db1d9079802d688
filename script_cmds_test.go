package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/genform/genform/internal/simulator"
)

// sim-create [-nowait] ENDPOINT BODYFILE [VAR] makes a generation directly
// on the script's simulator, the way a creation made outside genform comes
// to exist: it posts the JSON in BODYFILE to ENDPOINT (e.g.
// /v1/jobs/text2image) with the test token, prints the generation id and,
// given VAR, sets that environment variable to it so later commands can
// use $VAR. Unless -nowait, it then waits (up to 30s) for the job to end,
// succeed or failed.
func cmdSimCreate(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! sim-create")
	}
	fs := flag.NewFlagSet("sim-create", flag.ContinueOnError)
	noWait := fs.Bool("nowait", false, "")
	ts.Check(fs.Parse(args))
	if fs.NArg() < 2 || fs.NArg() > 3 {
		ts.Fatalf("usage: sim-create [-nowait] ENDPOINT BODYFILE [VAR]")
	}
	endpoint, body := fs.Arg(0), []byte(ts.ReadFile(fs.Arg(1)))
	req, err := http.NewRequest(http.MethodPost, holder(ts).url()+endpoint, bytes.NewReader(bytes.TrimSpace(body)))
	ts.Check(err)
	req.Header.Set("Authorization", "Bearer test-token")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	ts.Check(err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	ts.Check(err)
	if resp.StatusCode != http.StatusOK {
		ts.Fatalf("POST %s: %s: %s", endpoint, resp.Status, raw)
	}
	var env struct {
		Value struct {
			GenerationID string `json:"generation_id"`
		} `json:"value"`
	}
	ts.Check(json.Unmarshal(raw, &env))
	id := env.Value.GenerationID
	if id == "" {
		ts.Fatalf("POST %s: no generation_id in %s", endpoint, raw)
	}
	fmt.Fprintln(ts.Stdout(), id)
	if fs.NArg() == 3 {
		ts.Setenv(fs.Arg(2), id)
	}
	if *noWait {
		return
	}
	waitSim(ts, "job "+id+" has ended", func(rep simulator.JobsReport) bool {
		for _, j := range rep.Jobs {
			if j.ID == id && (j.Status == "succeed" || j.Status == "failed") {
				return true
			}
		}
		return false
	})
}

// replace FILE OLD NEW replaces every OLD in FILE with NEW (Go-quoted
// strings are unquoted first, so "\n" can be written), and fails when
// FILE holds no OLD: as a user would edit a file by hand.
func cmdReplace(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: replace FILE OLD NEW")
	}
	unquote := func(s string) string {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
		return s
	}
	path := ts.MkAbs(args[0])
	old, repl := unquote(args[1]), unquote(args[2])
	b, err := os.ReadFile(path)
	ts.Check(err)
	if !bytes.Contains(b, []byte(old)) {
		ts.Fatalf("%s holds no %q", args[0], old)
	}
	ts.Check(os.WriteFile(path, bytes.ReplaceAll(b, []byte(old), []byte(repl)), 0o600))
}

// cache-tamper [-link DIR] changes every entry of the cache in
// .genform/cache as a hostile or careless hand would: it appends a byte
// to each, or with -link replaces each entry's folder by a symbolic link
// to DIR, in which it puts a file of the entry's name. It prints how many
// entries it changed. cache-tamper -verify DIR checks that every file
// -link put in DIR is still there, as it was written.
func cmdCacheTamper(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! cache-tamper")
	}
	fs := flag.NewFlagSet("cache-tamper", flag.ContinueOnError)
	link := fs.String("link", "", "")
	verify := fs.String("verify", "", "")
	ts.Check(fs.Parse(args))
	if *verify != "" {
		entries, err := os.ReadDir(ts.MkAbs(*verify))
		ts.Check(err)
		if len(entries) == 0 {
			ts.Fatalf("%s is empty: the files put there are gone", *verify)
		}
		for _, e := range entries {
			if b, err := os.ReadFile(filepath.Join(ts.MkAbs(*verify), e.Name())); err != nil || string(b) != "a file outside the cache\n" {
				ts.Fatalf("%s/%s was changed: %q, %v", *verify, e.Name(), b, err)
			}
		}
		fmt.Fprintf(ts.Stdout(), "%d files unchanged\n", len(entries))
		return
	}
	root := ts.MkAbs(filepath.Join(".genform", "cache", "sha256"))
	folders, err := os.ReadDir(root)
	ts.Check(err)
	n := 0
	for _, f := range folders {
		dir := filepath.Join(root, f.Name())
		entries, err := os.ReadDir(dir)
		ts.Check(err)
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if *link == "" {
				f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
				ts.Check(err)
				_, err = f.Write([]byte{0})
				ts.Check(err)
				ts.Check(f.Close())
			} else {
				target := ts.MkAbs(*link)
				ts.Check(os.MkdirAll(target, 0o755))
				ts.Check(os.WriteFile(filepath.Join(target, e.Name()), []byte("a file outside the cache\n"), 0o644))
			}
			n++
		}
		if *link != "" {
			ts.Check(os.RemoveAll(dir))
			ts.Check(os.Symlink(ts.MkAbs(*link), dir))
		}
	}
	fmt.Fprintf(ts.Stdout(), "tampered with %d entries\n", n)
}
