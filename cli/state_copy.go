package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/genform/genform/statefile"
)

// runStatePush replaces the configured state with the state file FILE:
// how a project's state moves from its file into PostgreSQL once a
// backend "pg" block is added. FILE is only read; a target that would lose
// what was applied there is refused without -force (see statefile.Copy).
func runStatePush(env *Env, sc *stateCmd) int {
	if len(sc.args) != 1 {
		return env.Errorf("state push takes the state file to push, e.g. genform state push .genform/state.db; got %d arguments", len(sc.args))
	}
	file := sc.args[0]
	cfg := loadConfig(env, sc.vars.options(env))
	if cfg == nil {
		return ExitError
	}
	if cfg.Settings.Backend == nil && sameFile(file, cfg.Settings.StateFile) {
		return env.Errorf("%s is the configured state file itself: state push copies another state file into the configured state (a backend \"pg\" block's, or state_file's)", file)
	}
	src, err := statefile.Open(file, statefile.Options{ReadOnly: true, Command: "state push", LockTimeout: sc.lockTimeout})
	if err != nil {
		return env.Errorf("%v", err)
	}
	defer src.Close()
	dst, err := openState(cfg, "state push", sc.lockTimeout, true)
	if err != nil {
		return env.Errorf("%v", err)
	}
	defer dst.Close()
	c, err := statefile.Copy(dst, src, sc.force)
	if err != nil {
		return env.Errorf("pushing %s: %v; nothing was changed", file, err)
	}
	fmt.Fprintf(env.Stdout, "Pushed %s to %s: %s.\n", file, stateWhere(cfg), copiedSummary(c))
	return ExitOK
}

// runStatePull writes the configured state into the new state file FILE:
// a copy to keep, or the way back from PostgreSQL to a file.
func runStatePull(env *Env, sc *stateCmd) int {
	if len(sc.args) != 1 {
		return env.Errorf("state pull takes the new state file to write, e.g. genform state pull backup.db; got %d arguments", len(sc.args))
	}
	file := sc.args[0]
	if _, err := os.Lstat(file); !errors.Is(err, fs.ErrNotExist) {
		return env.Errorf("%s exists: state pull writes a new file only, never over one; remove it or name another", file)
	}
	cfg := loadConfig(env, sc.vars.options(env))
	if cfg == nil {
		return ExitError
	}
	src, err := readState(cfg, "state pull", sc.lockTimeout)
	if err != nil {
		return env.Errorf("%v", err)
	}
	if src == nil {
		return env.Errorf("there is no state file (%s): nothing has been applied in this directory yet", stateWhere(cfg))
	}
	defer src.Close()
	dst, err := statefile.Open(file, statefile.Options{Create: true, Command: "state pull"})
	if err != nil {
		return env.Errorf("%v", err)
	}
	c, err := statefile.Copy(dst, src, false)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(file)
		return env.Errorf("pulling the state into %s: %v; no file was written", file, err)
	}
	fmt.Fprintf(env.Stdout, "Pulled %s into %s: %s.\n", stateWhere(cfg), file, copiedSummary(c))
	return ExitOK
}

func copiedSummary(c statefile.Copied) string {
	return fmt.Sprintf("%d resource instance%s, %d unfinished submission%s, %d generation%s in the history",
		c.Resources, plural(c.Resources), c.Intents, plural(c.Intents), c.History, plural(c.History))
}

// sameFile reports whether the paths a and b name one file (b need not
// exist).
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	pa, _ := filepath.Abs(a)
	pb, _ := filepath.Abs(b)
	return pa == pb
}
