package backend

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/statefile"
)

// OpenState opens the state under its exclusive lock, for a command
// that writes the state. With create false, a missing file gives (nil, nil).
func OpenState(cfg *config.Config, ws, command string, lockTimeout time.Duration, create bool) (*statefile.Store, error) {
	return Open(cfg, ws, statefile.Options{LockTimeout: lockTimeout, Command: command, Create: create})
}

// LockState opens the state under its exclusive lock for a command that
// writes nothing but must not run beside one that does (plan): a
// database role that may only read is enough (statefile.Options.
// WritesNothing). A missing state gives (nil, nil).
func LockState(cfg *config.Config, ws, command string, lockTimeout time.Duration) (*statefile.Store, error) {
	return Open(cfg, ws, statefile.Options{LockTimeout: lockTimeout, Command: command, WritesNothing: true})
}

// ReadState opens the state for reading: the commands that only read it
// (show, state list, state show, state pull, output, history, gallery, pull)
// run beside each other, on a read-only checkout, and beside a command
// holding the exclusive lock, reading the state it last committed
// (statefile.Options.ReadOnly). A missing state gives (nil, nil).
func ReadState(cfg *config.Config, ws, command string, lockTimeout time.Duration) (*statefile.Store, error) {
	return Open(cfg, ws, statefile.Options{LockTimeout: lockTimeout, Command: command, ReadOnly: true})
}

// Open opens the state of workspace ws ("" is default) of the storage cfg
// names with opts, after Check: the state file (which must lie inside the
// working directory) or the PostgreSQL schema. Without opts.Create, a
// missing state gives (nil, nil).
func Open(cfg *config.Config, ws string, opts statefile.Options) (*statefile.Store, error) {
	if err := Check(cfg); err != nil {
		return nil, err
	}
	if cfg.Settings.Backend == nil {
		if err := workdir.CheckInside(".", filepath.Dir(cfg.Settings.StateFile)); err != nil {
			return nil, fmt.Errorf("state_file: %w", err)
		}
	}
	s, err := Configured(cfg)
	if err != nil {
		return nil, err
	}
	st, err := s.In(ws).Open(opts)
	switch {
	case err == nil:
		return st, nil
	case !opts.ReadOnly && (errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission)):
		return nil, fmt.Errorf("%w; genform %s takes the state's exclusive lock, which needs the state file and its directory writable: run it in a writable checkout (show, state list, state show, output and gallery only read the state, and work in a read-only one)", err, opts.Command)
	}
	return nil, err
}

// Where names where workspace ws's state is kept, for messages: the
// state file, or the PostgreSQL schema of the backend block.
func Where(cfg *config.Config, ws string) string {
	if be := cfg.Settings.Backend; be != nil {
		if ws != "" && ws != DefaultWorkspace {
			return "PostgreSQL schema " + workspaceSchema(be.SchemaName, ws)
		}
		return "PostgreSQL schema " + be.SchemaName
	}
	return FileStorage(cfg.Settings.StateFile).In(ws).Path
}
