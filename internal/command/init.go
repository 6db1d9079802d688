package command

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/atomicfile"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/boltstate"
	"github.com/genform/genform/statefile/pgstate"
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
`,
		run: runInit,
	})
}

// storageFile is where a working copy remembers its storage.
var storageFile = filepath.Join(".genform", "backend.json")

// storageFormat is storageFile's format_version.
const storageFormat = "1"

// storage is a state storage, as storageFile remembers it: the type and
// where, never a password.
type storage struct {
	FormatVersion string `json:"format_version"`
	// Type is "file" or "pg".
	Type string `json:"type"`
	// Path is the state file's, as the configuration names it.
	Path string `json:"path,omitempty"`
	// Host, Port, Database and Schema say where a PostgreSQL state is;
	// ConnString is the connection string without its password, to reach
	// it again.
	Host       string `json:"host,omitempty"`
	Port       uint16 `json:"port,omitempty"`
	Database   string `json:"database,omitempty"`
	User       string `json:"user,omitempty"`
	Schema     string `json:"schema,omitempty"`
	ConnString string `json:"conn_str,omitempty"`

	// conn is the connection string as configured, its password
	// included: how the configured storage is reached. Never written;
	// a remembered storage has only ConnString (and the password comes
	// from PGPASSWORD or ~/.pgpass).
	conn string
}

// configuredStorage is the storage cfg names.
func configuredStorage(cfg *config.Config) (*storage, error) {
	be := cfg.Settings.Backend
	if be == nil {
		return &storage{FormatVersion: storageFormat, Type: "file", Path: filepath.ToSlash(filepath.Clean(cfg.Settings.StateFile))}, nil
	}
	loc, err := pgstate.Locate(pgstate.Config{ConnString: be.ConnStr, Schema: be.SchemaName})
	if err != nil {
		return nil, err
	}
	return &storage{FormatVersion: storageFormat, Type: "pg", Host: loc.Host, Port: loc.Port, Database: loc.Database,
		User: loc.User, Schema: loc.Schema, ConnString: loc.ConnString, conn: be.ConnStr}, nil
}

// same reports whether s and o are one storage: the same file, or the
// same schema of the same database on the same server.
func (s *storage) same(o *storage) bool {
	if s.Type != o.Type {
		return false
	}
	if s.Type == "file" {
		return s.Path == o.Path
	}
	return s.Host == o.Host && s.Port == o.Port && s.Database == o.Database && s.Schema == o.Schema
}

// String names the storage in messages.
func (s *storage) String() string {
	if s.Type == "file" {
		return "the state file " + s.Path
	}
	return "PostgreSQL " + pgstate.Location{Host: s.Host, Port: s.Port, Database: s.Database, Schema: s.Schema}.String()
}

// open opens the state kept in s, as openStateFile does.
func (s *storage) open(opts statefile.Options) (*statefile.Store, error) {
	var st *statefile.Store
	var err error
	if s.Type == "file" {
		st, err = boltstate.Open(filepath.FromSlash(s.Path), opts)
	} else {
		conn := s.ConnString
		if s.conn != "" {
			conn = s.conn
		}
		st, err = pgstate.Open(pgstate.Config{ConnString: conn, Schema: s.Schema}, opts)
	}
	if !opts.Create && errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return st, err
}

// rememberedStorage reads storageFile: nil when this working copy
// remembers none.
func rememberedStorage() (*storage, error) {
	data, err := os.ReadFile(storageFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s, where this working copy remembers its state storage: %w", storageFile, err)
	}
	var s storage
	if err := json.Unmarshal(data, &s); err != nil || s.FormatVersion != storageFormat || (s.Type != "file" && s.Type != "pg") {
		return nil, fmt.Errorf("%s, where this working copy remembers its state storage, is not one genform wrote; run genform init -reconfigure to write it anew", storageFile)
	}
	return &s, nil
}

// remember writes s into storageFile.
func (s *storage) remember() error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(storageFile), 0o700); err != nil {
		return fmt.Errorf("remembering the state storage in %s: %w", storageFile, err)
	}
	if err := atomicfile.WriteFile(storageFile, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("remembering the state storage in %s: %w", storageFile, err)
	}
	return nil
}

// checkStorage stops a command when the configuration names another
// storage than the one this working copy remembers: the state would seem
// empty there, and an apply would pay again for everything. A working
// copy that remembers none passes.
func checkStorage(cfg *config.Config) error {
	prev, err := rememberedStorage()
	if err != nil {
		return err
	}
	if prev == nil {
		// Nothing remembered: a backend block added to a working copy
		// whose state is still in its file would plan on an empty state,
		// and pay again for everything the file records.
		if cfg.Settings.Backend == nil {
			return nil
		}
		if _, err := os.Lstat(cfg.Settings.StateFile); err != nil {
			return nil
		}
		cur, err := configuredStorage(cfg)
		if err != nil {
			return err
		}
		return fmt.Errorf("the configuration keeps the state in %s, and this working copy still has the state file %s: run genform init -migrate-state to copy it there first, or genform init -reconfigure to start there without it (the file is left as it is)", cur, filepath.ToSlash(cfg.Settings.StateFile))
	}
	cur, err := configuredStorage(cfg)
	if err != nil {
		return err
	}
	if prev.same(cur) {
		return nil
	}
	return fmt.Errorf("the state storage changed: this working copy used %s, and the configuration now keeps the state in %s. Run genform init -migrate-state to copy the state into it, or genform init -reconfigure to start there without it", prev, cur)
}

func runInit(env *Env, args []string) int {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	var vars varFlags
	vars.register(fs)
	migrate := fs.Bool("migrate-state", false, "")
	forceCopy := fs.Bool("force-copy", false, "")
	reconfigure := fs.Bool("reconfigure", false, "")
	lockTimeout := fs.Duration("lock-timeout", 0, "")
	if ok, code := parseFlags(env, commands["init"], fs, args); !ok {
		return code
	}
	if msg := extraArgs("init", "no arguments", fs, args, 0); msg != "" {
		return env.Errorf("%s", msg)
	}
	switch {
	case *migrate && *reconfigure:
		return env.Errorf("-migrate-state copies the state into the configured storage and -reconfigure starts there without it: pass one of them")
	case *forceCopy && *reconfigure:
		return env.Errorf("-force-copy copies the state, replacing what the configured storage holds, and -reconfigure starts there without it: pass one of them")
	}
	// As Terraform's: -force-copy is -migrate-state without asking.
	*migrate = *migrate || *forceCopy
	cfg := loadConfig(env, vars.options(env))
	if cfg == nil {
		return ExitError
	}
	cur, err := configuredStorage(cfg)
	if err != nil {
		return env.Errorf("%v", err)
	}
	prev, err := rememberedStorage()
	if err != nil && !*reconfigure {
		return env.Errorf("%v", err)
	}
	if prev == nil && cur.Type == "pg" {
		// The first init of a working copy that kept its state in a file
		// before the backend block was added: that file is what to move.
		file := &storage{FormatVersion: storageFormat, Type: "file", Path: filepath.ToSlash(filepath.Clean(cfg.Settings.StateFile))}
		if _, err := os.Stat(cfg.Settings.StateFile); err == nil {
			prev = file
		}
	}
	changed := prev != nil && !prev.same(cur)
	switch {
	case changed && *reconfigure:
		fmt.Fprintf(env.Stdout, "The state is kept in %s from now on; %s was not copied, and is left as it is.\n", cur, prev)
	case changed && *migrate:
		if code := migrateState(env, prev, cur, *forceCopy, *lockTimeout); code != ExitOK {
			return code
		}
	case changed:
		return env.Errorf("the configuration keeps the state in %s, and this working copy used %s: pass -migrate-state to copy the state there, or -reconfigure to start there without it", cur, prev)
	default:
		// Nothing to move: check that the storage can be reached (and,
		// for PostgreSQL, the credentials work) before remembering it.
		st, err := cur.open(statefile.Options{ReadOnly: true, Command: "init", LockTimeout: *lockTimeout})
		if err != nil {
			return env.Errorf("%v", err)
		}
		if st != nil {
			st.Close()
		}
		if *migrate {
			fmt.Fprintf(env.Stdout, "There is no other storage to migrate from: ")
		}
		fmt.Fprintf(env.Stdout, "The state is kept in %s.\n", cur)
	}
	if err := cur.remember(); err != nil {
		return env.Errorf("%v", err)
	}
	return ExitOK
}

// migrateState copies the state from prev into cur (statefile.Copy).
func migrateState(env *Env, prev, cur *storage, force bool, lockTimeout time.Duration) int {
	// A state file is opened as a writer would: one of an older schema is
	// migrated first (with the backup migration keeps), as any command
	// would have done, and only then copied.
	src, err := prev.open(statefile.Options{ReadOnly: prev.Type != "file", Command: "init", LockTimeout: lockTimeout})
	if err != nil {
		return env.Errorf("opening the state to migrate from, %s: %v", prev, err)
	}
	if src == nil {
		fmt.Fprintf(env.Stdout, "%s holds no state: nothing to copy. The state is kept in %s from now on.\n", capitalize(prev.String()), cur)
		return ExitOK
	}
	defer src.Close()
	dst, err := cur.open(statefile.Options{Create: true, Command: "init", LockTimeout: lockTimeout})
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
	if c.Unchanged {
		fmt.Fprintf(env.Stdout, "%s holds the state of %s already: nothing was copied.\n", capitalize(cur.String()), prev)
		return ExitOK
	}
	fmt.Fprintf(env.Stdout, "Copied the state from %s to %s: %s. The state is kept there from now on; %s is left as it is.\n", prev, cur, copiedSummary(c), prev)
	return ExitOK
}

// capitalize starts s with a capital letter, for a sentence that opens
// with a storage's name.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
