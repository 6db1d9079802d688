package simkit

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/genform/genform/internal/atomicfile"
)

// JobFiles keeps one JSON file per job under DataDir/jobs, each written to a
// temporary file and renamed into place so a crash never leaves half a
// job. One DataDir serves one simulator at a time.
type JobFiles struct {
	dataDir string
	jobsDir string
}

const secretFile = "secret.key"

// OpenJobFiles opens (creating it) the data directory dataDir.
func OpenJobFiles(dataDir string) (*JobFiles, error) {
	s := &JobFiles{dataDir: dataDir, jobsDir: filepath.Join(dataDir, "jobs")}
	if err := os.MkdirAll(s.jobsDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the simulator data directory: %w", err)
	}
	return s, nil
}

// secret returns the key that signs URLs, creating it on first use, so
// URLs handed out before a restart stay valid after it.
func (s *JobFiles) secret() ([]byte, error) {
	path := filepath.Join(s.dataDir, secretFile)
	b, err := os.ReadFile(path)
	if err == nil {
		key, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(key) < 16 {
			return nil, fmt.Errorf("reading %s: not a hex key of at least 16 bytes; delete it to make a new one", path)
		}
		return key, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading the URL signing key: %w", err)
	}
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(path, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("saving the URL signing key: %w", err)
	}
	return key, nil
}

func newKey() ([]byte, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generating the URL signing key: %w", err)
	}
	return key, nil
}

// Signer signs the links a simulator hands out, so that neither the
// file nor the expiry a link names can be changed without its key.
type Signer struct{ key []byte }

// NewSigner is the signer of a simulator whose data directory is dataDir:
// its key is kept there (DataDir/secret.key), so links handed out before
// a restart stay valid after it; without one, the key is made anew.
func NewSigner(dataDir string) (*Signer, error) {
	if dataDir == "" {
		key, err := newKey()
		return &Signer{key: key}, err
	}
	st, err := OpenJobFiles(dataDir)
	if err != nil {
		return nil, err
	}
	key, err := st.secret()
	return &Signer{key: key}, err
}

// Sign is the signature of msg: the hex HMAC-SHA256 of it.
func (s *Signer) Sign(msg string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// Valid reports whether sig is the signature of msg, in constant time.
func (s *Signer) Valid(msg, sig string) bool {
	return hmac.Equal([]byte(sig), []byte(s.Sign(msg)))
}

// Write writes b as the file of job id.
func (s *JobFiles) Write(id string, b []byte) error {
	if err := atomicfile.WriteFile(filepath.Join(s.jobsDir, id+".json"), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("saving job %s: %w", id, err)
	}
	return nil
}

// Load calls decode with the path and bytes of every saved job. Leftover
// temporary files of an interrupted write are removed; a job file that
// cannot be read, or that decode refuses, is an error rather than
// silently dropped, since losing a job would make a client pay twice.
func (s *JobFiles) Load(decode func(path string, b []byte) error) error {
	entries, err := os.ReadDir(s.jobsDir)
	if err != nil {
		return fmt.Errorf("listing saved jobs: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(s.jobsDir, name)
		if strings.HasSuffix(name, ".tmp") {
			os.Remove(path)
			continue
		}
		if e.IsDir() || !strings.HasSuffix(name, ".json") {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("reading saved job: %w", err)
		}
		if err := decode(path, b); err != nil {
			return err
		}
	}
	return nil
}

// Flush writes, with save, a copy of every job of jobs whose dirty flag
// is set, clearing the flag: what a simulator's Close makes durable (the
// request counters and cancellations that changed since a job was last
// written). The copies are taken under mu, which guards jobs, and
// written after it is released.
func Flush[T any](mu *sync.Mutex, jobs map[string]*T, dirty func(*T) *bool, save func(*T) error) error {
	mu.Lock()
	var changed []T
	for _, j := range jobs {
		if d := dirty(j); *d {
			changed = append(changed, *j)
			*d = false
		}
	}
	mu.Unlock()
	var errs []error
	for i := range changed {
		if err := save(&changed[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("simulator: %w", err)
	}
	return nil
}
