package command

import (
	"errors"
	"flag"
	"os"
	"time"

	"github.com/genform/genform/internal/backend"
	"github.com/genform/genform/internal/operation"
	"github.com/genform/genform/internal/views"
	"github.com/genform/genform/statefile"
)

func init() {
	register(&command{
		name:     "init",
		synopsis: "Prepare the configured state storage; move the state into it",
		usage: `Usage: genform init [flags]

  Checks the state storage the configuration names (the state file, or a
  backend "pg" block's PostgreSQL schema) and remembers it for this working
  copy, in .genform/backend.json (its type and location, never a password).
  When the configuration's storage differs from the one remembered, every
  other command stops until init says what to do with the state there:

Flags:
  -migrate-state       copy the state (records, unfinished submissions,
                       history, protections, lineage) from the storage used
                       before into the configured one, in one transaction;
                       the old storage is left as it is
  -force-copy          -migrate-state without the checks: replace a state of
                       another lineage (or a newer one) already in the
                       configured storage
  -reconfigure         start on the configured storage without copying
  -var 'NAME=VALUE'    set a variable (repeatable)
  -var-file=FILE       read variables from a *.genvars.hcl file (repeatable)
  -lock-timeout=DUR    wait this long for each state's lock (default 0s)

  With nothing remembered, the storage used before is the state file, when
  the configuration now names PostgreSQL and the file holds a state.

  Of the variables, init needs only those that state_file or the backend
  block's settings are made from; the others may be left unset.
`,
		run: runInit,
	})
}

func runInit(env *Env, args []string) int {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	var vars varFlags
	vars.register(fs)
	migrate := fs.Bool("migrate-state", false, "")
	forceCopy := fs.Bool("force-copy", false, "")
	reconfigure := fs.Bool("reconfigure", false, "")
	lockTimeout := fs.Duration("lock-timeout", 0, "")
	if ok, code := parseArgs(env, "init", fs, args, "no arguments", 0); !ok {
		return code
	}
	switch {
	case *migrate && *reconfigure:
		return env.Errorf("-migrate-state copies the state into the configured storage and -reconfigure starts there without it: pass one of them")
	case *forceCopy && *reconfigure:
		return env.Errorf("-force-copy copies the state, replacing what the configured storage holds, and -reconfigure starts there without it: pass one of them")
	}
	// As Terraform's: -force-copy is -migrate-state without asking.
	*migrate = *migrate || *forceCopy
	// init needs only where the state is kept: a variable that has no
	// value is unknown rather than an error, unless that place is made
	// from it.
	opts := vars.options(env)
	opts.UnknownUnset = true
	ws, diags := operation.Load(env.opEnv(), opts)
	diags = append(diags, ws.Config.UnlocatedState()...)
	if !diagnose(env, ws, diags) {
		return ExitError
	}
	cfg := ws.Config
	cur, err := backend.Configured(cfg)
	if err != nil {
		return env.Errorf("%v", err)
	}
	prev, err := backend.Remembered()
	if err != nil && !*reconfigure {
		return env.Errorf("%v", err)
	}
	if prev == nil && cur.Type == "pg" {
		// The first init of a working copy that kept its state in a file
		// before the backend block was added: that file is what to move.
		file := backend.FileStorage(cfg.Settings.StateFile)
		if _, err := os.Stat(cfg.Settings.StateFile); err == nil {
			prev = file
		}
	}
	view := views.NewInit(&env.Streams)
	changed := prev != nil && !prev.Same(cur)
	switch {
	case changed && *reconfigure:
		view.Reconfigured(cur.String(), prev.String())
	case changed && *migrate:
		if code := migrateState(env, view, prev, cur, *forceCopy, *lockTimeout); code != ExitOK {
			return code
		}
	case changed:
		return env.Errorf("the configuration keeps the state in %s, and this working copy used %s: pass -migrate-state to copy the state there, or -reconfigure to start there without it", cur, prev)
	default:
		// Nothing to move: check that the storage can be reached (and,
		// for PostgreSQL, the credentials work) before remembering it.
		st, err := cur.Open(statefile.Options{ReadOnly: true, Command: "init", LockTimeout: *lockTimeout})
		if err != nil {
			return env.Errorf("%v", err)
		}
		if st != nil {
			st.Close()
		}
		view.Kept(cur.String(), *migrate)
	}
	if err := cur.Remember(); err != nil {
		return env.Errorf("%v", err)
	}
	return ExitOK
}

// migrateState copies the state from prev into cur (statefile.Copy).
func migrateState(env *Env, view views.Init, prev, cur *backend.Storage, force bool, lockTimeout time.Duration) int {
	// A state file is opened as a writer would: one of an older schema is
	// migrated first (with the backup migration keeps), as any command
	// would have done, and only then copied. A state in a database is
	// read under its shared lock, which keeps its writers out: what one
	// added while it was copied would be left behind.
	src, err := prev.Open(statefile.Options{ReadOnly: prev.Type != "file", KeepWritersOut: true, Command: "init", LockTimeout: lockTimeout})
	if err != nil {
		return env.Errorf("opening the state to migrate from, %s: %v", prev, err)
	}
	if src == nil {
		view.NothingToCopy(prev.String(), cur.String())
		return ExitOK
	}
	defer src.Close()
	dst, err := cur.Open(statefile.Options{Create: true, Command: "init", LockTimeout: lockTimeout})
	if err != nil {
		return env.Errorf("%v", err)
	}
	defer dst.Close()
	c, err := statefile.Copy(dst, src, force)
	var lose *statefile.LoseError
	if errors.As(err, &lose) {
		return env.Errorf("migrating the state from %s to %s: %v; nothing was copied. Pass -force-copy to replace it anyway, or -reconfigure to keep it and leave the state in %s behind", prev, cur, err, prev)
	}
	if err != nil {
		return env.Errorf("migrating the state from %s to %s: %v; nothing was copied", prev, cur, err)
	}
	view.Migrated(prev.String(), cur.String(), c)
	return ExitOK
}
