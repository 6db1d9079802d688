package backend

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/atomicfile"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/boltstate"
	"github.com/genform/genform/statefile/pgstate"
)

// Workspaces, as Terraform's: each has its own state and lock in the
// configured storage, and one history serves them all (package
// operation reads every workspace's for a plan's restores). default is
// the state as it always was: the state file, or the backend's schema.
// Another workspace's state is kept beside it:
//
//	file: <dir of state_file>/workspaces/<NAME>/<name of state_file>
//	pg:   schema <schema_name>_ws_<NAME, encoded>
//
// The workspace a working copy uses is GENFORM_WORKSPACE when it is set,
// else the one genform workspace select remembers in WorkspaceFile, else
// default.

// DefaultWorkspace is the workspace of the state as it always was.
const DefaultWorkspace = "default"

// WorkspaceEnv selects the workspace, over WorkspaceFile (as TF_WORKSPACE
// does Terraform's).
const WorkspaceEnv = "GENFORM_WORKSPACE"

// WorkspaceFile is where a working copy remembers the workspace genform
// workspace select chose.
var WorkspaceFile = filepath.Join(".genform", "workspace")

// workspaceName is what a workspace may be called: letters, digits, '-',
// '_' and '.', no path separator.
var workspaceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// maxWorkspaceName bounds a workspace's name, so that its PostgreSQL
// schema's name (with the backend's schema_name before it) stays within
// the 63 bytes of an identifier.
const maxWorkspaceName = 40

// CheckWorkspace refuses a name a workspace cannot have, saying what it
// may be.
func CheckWorkspace(name string) error {
	switch {
	case name == "":
		return errors.New("a workspace needs a name")
	case name == "." || name == ".." || !workspaceName.MatchString(name):
		return fmt.Errorf("%q cannot name a workspace: use letters, digits, '-', '_' and '.' (no path separators)", name)
	case len(name) > maxWorkspaceName:
		return fmt.Errorf("%q cannot name a workspace: at most %d characters", name, maxWorkspaceName)
	}
	return nil
}

// Selected is the workspace the working copy uses: GENFORM_WORKSPACE (read
// with getenv), else the one WorkspaceFile remembers, else default.
func Selected(getenv func(string) string) (string, error) {
	if name := getenv(WorkspaceEnv); name != "" {
		if err := CheckWorkspace(name); err != nil {
			return "", fmt.Errorf("%s: %w", WorkspaceEnv, err)
		}
		return name, nil
	}
	data, err := os.ReadFile(WorkspaceFile)
	if errors.Is(err, fs.ErrNotExist) {
		return DefaultWorkspace, nil
	}
	if err != nil {
		return "", fmt.Errorf("reading %s, the workspace this working copy uses: %w", WorkspaceFile, err)
	}
	name := strings.TrimSpace(string(data))
	if err := CheckWorkspace(name); err != nil {
		return "", fmt.Errorf("%s: %w; run genform workspace select NAME to choose one", WorkspaceFile, err)
	}
	return name, nil
}

// Select remembers name as the workspace of the working copy (default
// forgets the choice: it is the one used when none is remembered).
func Select(name string) error {
	if err := CheckWorkspace(name); err != nil {
		return err
	}
	if name == DefaultWorkspace {
		if err := os.Remove(WorkspaceFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("forgetting the selected workspace (%s): %w", WorkspaceFile, err)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(WorkspaceFile), 0o700); err != nil {
		return fmt.Errorf("remembering the selected workspace in %s: %w", WorkspaceFile, err)
	}
	if err := atomicfile.WriteFile(WorkspaceFile, []byte(name+"\n"), 0o644); err != nil {
		return fmt.Errorf("remembering the selected workspace in %s: %w", WorkspaceFile, err)
	}
	return nil
}

// In is the storage of workspace ws beside s, the default workspace's.
func (s *Storage) In(ws string) *Storage {
	if ws == DefaultWorkspace || ws == "" {
		return s
	}
	o := *s
	if s.Type == "file" {
		o.Path = path.Join(path.Dir(s.Path), "workspaces", ws, path.Base(s.Path))
	} else {
		o.Schema = workspaceSchema(s.Schema, ws)
	}
	return &o
}

// workspaceSchema is the schema of workspace ws beside schema: the name
// encoded in what a schema name may hold (lower-case letters, digits, and
// _), one way back: a letter or digit is itself, '_' is "__", and any
// other character is '_' and its two hex digits ("pr-1" is "pr_2d1").
func workspaceSchema(schema, ws string) string {
	var b strings.Builder
	b.WriteString(schema)
	b.WriteString(workspaceSep)
	for _, c := range []byte(ws) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteByte(c)
		case c == '_':
			b.WriteString("__")
		default:
			fmt.Fprintf(&b, "_%02x", c)
		}
	}
	return b.String()
}

// workspaceSep separates a schema's name from its workspace's.
const workspaceSep = "_ws_"

// schemaWorkspace is workspaceSchema's inverse for schemas beside schema;
// ok is false for another schema.
func schemaWorkspace(schema, s string) (string, bool) {
	enc, ok := strings.CutPrefix(s, schema+workspaceSep)
	if !ok || enc == "" {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(enc); i++ {
		c := enc[i]
		if c != '_' {
			b.WriteByte(c)
			continue
		}
		switch {
		case i+1 < len(enc) && enc[i+1] == '_':
			b.WriteByte('_')
			i++
		case i+2 < len(enc):
			var v byte
			if _, err := fmt.Sscanf(enc[i+1:i+3], "%02x", &v); err != nil {
				return "", false
			}
			b.WriteByte(v)
			i += 2
		default:
			return "", false
		}
	}
	name := b.String()
	return name, CheckWorkspace(name) == nil && workspaceSchema(schema, name) == s
}

// Workspaces lists the workspaces of the configured storage, default
// first, then by name: those whose state exists.
func Workspaces(cfg *config.Config) ([]string, error) {
	s, err := Configured(cfg)
	if err != nil {
		return nil, err
	}
	var names []string
	if s.Type == "file" {
		dir := filepath.Join(filepath.Dir(filepath.FromSlash(s.Path)), "workspaces")
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("listing the workspaces in %s: %w", filepath.ToSlash(dir), err)
		}
		for _, e := range entries {
			if !e.IsDir() || CheckWorkspace(e.Name()) != nil || e.Name() == DefaultWorkspace {
				continue
			}
			if _, err := os.Stat(filepath.FromSlash(s.In(e.Name()).Path)); err == nil {
				names = append(names, e.Name())
			}
		}
	} else {
		schemas, err := pgstate.Schemas(pgstate.Config{ConnString: s.conn, Schema: s.Schema}, s.Schema+workspaceSep)
		if err != nil {
			return nil, err
		}
		for _, sc := range schemas {
			if name, ok := schemaWorkspace(s.Schema, sc); ok && name != DefaultWorkspace {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return append([]string{DefaultWorkspace}, names...), nil
}

// DeleteWorkspace removes workspace ws's state, waiting up to lockTimeout
// for a writer that holds its lock. check, when not nil, is called first
// with the state open under that lock; an error from it stops the
// deletion. It touches nothing else: no output file, no object of the
// store, no other workspace's state. A command that was waiting for the
// lock finds no state when it gets it (an apply starts a new one).
func DeleteWorkspace(cfg *config.Config, ws string, lockTimeout time.Duration, check func(*statefile.Store) error) error {
	if ws == DefaultWorkspace {
		return errors.New("the default workspace cannot be deleted")
	}
	if err := CheckWorkspace(ws); err != nil {
		return err
	}
	if err := Check(cfg); err != nil {
		return err
	}
	s, err := Configured(cfg)
	if err != nil {
		return err
	}
	in := s.In(ws)
	opts := statefile.Options{LockTimeout: lockTimeout, Command: "workspace delete"}
	if s.Type != "file" {
		err := pgstate.Drop(pgstate.Config{ConnString: s.conn, Schema: in.Schema}, opts, check)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("workspace %q does not exist (genform workspace list shows those that do)", ws)
		}
		return err
	}
	file := filepath.FromSlash(in.Path)
	if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("workspace %q does not exist (genform workspace list shows those that do)", ws)
	}
	st, err := boltstate.Open(file, opts)
	if err != nil {
		return err
	}
	if check != nil {
		if err := check(st); err != nil {
			st.Close()
			return err
		}
	}
	// The folder is moved aside while the lock is held, then removed: a
	// command waiting for the lock finds its file gone (boltstate refuses
	// a file removed while it waited), and none can open it meanwhile.
	dir := filepath.Dir(file)
	trash := filepath.Join(filepath.Dir(dir), ".deleting-"+filepath.Base(dir))
	os.RemoveAll(trash)
	if err := os.Rename(dir, trash); err != nil {
		st.Close()
		return fmt.Errorf("removing workspace %s: %w", ws, err)
	}
	st.Close()
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("workspace %s is deleted, but its folder %s is left: %w; remove it by hand", ws, filepath.ToSlash(trash), err)
	}
	return nil
}
