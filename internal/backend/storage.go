package backend

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/atomicfile"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/boltstate"
	"github.com/genform/genform/statefile/pgstate"
)

// File is where a working copy remembers its state storage.
var File = filepath.Join(".genform", "backend.json")

// fileFormat is File's format_version.
const fileFormat = "1"

// Storage is a state storage, as File remembers it: the type and
// where, never a password.
type Storage struct {
	FormatVersion string `json:"format_version"`
	// Type is "file" or "pg".
	Type string `json:"type"`
	// Path is the state file's, as the configuration names it.
	Path string `json:"path,omitempty"`
	// Host, Port, Database and Schema say where a PostgreSQL state is;
	// ConnString reaches it again (pgstate.Location's: rebuilt from the
	// hosts, ports, database, user and TLS settings, never a password or
	// anything else of the configured string).
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

// Configured is the storage cfg names.
func Configured(cfg *config.Config) (*Storage, error) {
	be := cfg.Settings.Backend
	if be == nil {
		return FileStorage(cfg.Settings.StateFile), nil
	}
	loc, err := pgstate.Locate(pgstate.Config{ConnString: be.ConnStr, Schema: be.SchemaName})
	if err != nil {
		return nil, err
	}
	return &Storage{FormatVersion: fileFormat, Type: "pg", Host: loc.Host, Port: loc.Port, Database: loc.Database,
		User: loc.User, Schema: loc.Schema, ConnString: loc.ConnString, conn: be.ConnStr}, nil
}

// Same reports whether s and o are one storage: the same file, or the
// same schema of the same database on the same server.
func (s *Storage) Same(o *Storage) bool {
	if s.Type != o.Type {
		return false
	}
	if s.Type == "file" {
		return s.Path == o.Path
	}
	return s.Host == o.Host && s.Port == o.Port && s.Database == o.Database && s.Schema == o.Schema
}

// String names the storage in messages.
func (s *Storage) String() string {
	if s.Type == "file" {
		return "the state file " + s.Path
	}
	return "PostgreSQL " + pgstate.Location{Host: s.Host, Port: s.Port, Database: s.Database, Schema: s.Schema}.String()
}

// Open opens the state kept in s. Without opts.Create, a missing state
// gives (nil, nil).
func (s *Storage) Open(opts statefile.Options) (*statefile.Store, error) {
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

// Remembered reads File: nil when this working copy
// remembers none.
func Remembered() (*Storage, error) {
	data, err := os.ReadFile(File)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s, where this working copy remembers its state storage: %w", File, err)
	}
	var s Storage
	if err := json.Unmarshal(data, &s); err != nil || s.FormatVersion != fileFormat || (s.Type != "file" && s.Type != "pg") {
		return nil, fmt.Errorf("%s, where this working copy remembers its state storage, is not one genform wrote; run genform init -reconfigure to write it anew", File)
	}
	return &s, nil
}

// Remember writes s into File.
func (s *Storage) Remember() error {
	s.FormatVersion = fileFormat
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(File), 0o700); err != nil {
		return fmt.Errorf("remembering the state storage in %s: %w", File, err)
	}
	if err := atomicfile.WriteFile(File, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("remembering the state storage in %s: %w", File, err)
	}
	return nil
}

// Check stops a command when the configuration names another
// storage than the one this working copy remembers: the state would seem
// empty there, and an apply would pay again for everything. A working
// copy that remembers none passes.
func Check(cfg *config.Config) error {
	prev, err := Remembered()
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
		cur, err := Configured(cfg)
		if err != nil {
			return err
		}
		return fmt.Errorf("the configuration keeps the state in %s, and this working copy still has the state file %s: run genform init -migrate-state to copy it there first, or genform init -reconfigure to start there without it (the file is left as it is)", cur, filepath.ToSlash(cfg.Settings.StateFile))
	}
	cur, err := Configured(cfg)
	if err != nil {
		return err
	}
	if prev.Same(cur) {
		return nil
	}
	return fmt.Errorf("the state storage changed: this working copy used %s, and the configuration now keeps the state in %s. Run genform init -migrate-state to copy the state into it, or genform init -reconfigure to start there without it", prev, cur)
}

// FileStorage is the state file at path as a storage.
func FileStorage(path string) *Storage {
	return &Storage{FormatVersion: fileFormat, Type: "file", Path: filepath.ToSlash(filepath.Clean(path))}
}
