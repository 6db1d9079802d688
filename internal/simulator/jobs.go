package simulator

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/genform/genform/internal/atomicfile"
	"github.com/genform/genform/internal/rules"
)

// Job statuses, as the service's documentation lists them.
const (
	statusPending        = "pending"
	statusProcessing     = "processing"
	statusPostProcessing = "post_processing"
	statusSucceed        = "succeed"
	statusFailed         = "failed"
)

// Shares of a job's latency spent pending and post-processing; processing
// takes the rest, with progress rising from 0 to 1 across it.
const (
	pendingShare        = 0.10
	postProcessingShare = 0.15
)

// job is one creation. Everything its lifecycle needs is fixed when it is
// created (creation time, latency, whether it fails, its seed), so its
// status is a function of the clock and survives a restart unchanged.
type job struct {
	ID          string          `json:"id"`
	Endpoint    string          `json:"endpoint"`
	Body        json.RawMessage `json:"body"`
	Fingerprint string          `json:"fingerprint"`
	// TokenSHA256 is the hash of the bearer token that created the job: the
	// job's owner, without keeping the token itself on disk.
	TokenSHA256 string        `json:"token_sha256"`
	CreatedAt   time.Time     `json:"created_at"`
	Latency     time.Duration `json:"latency_ns"`
	Fail        bool          `json:"fail"`
	Seed        int64         `json:"seed"` // resolved: never -1
	// Counters, flushed to disk by Server.Close rather than on every poll.
	StatusRequests int `json:"status_requests"`
	DetailRequests int `json:"detail_requests"`

	req   *request // parsed from Body
	dirty bool     // counters changed since the job was last written
}

// jobFileVersion is the version of the per-job file format.
const jobFileVersion = 1

type jobFile struct {
	Version int `json:"version"`
	*job
}

// phase is where a job stands at some instant.
type phase struct {
	status   string
	progress float64
	since    time.Time // when the job entered this status
}

func (j *job) finishAt() time.Time { return j.CreatedAt.Add(j.Latency) }

func (j *job) phaseAt(now time.Time) phase {
	elapsed := now.Sub(j.CreatedAt)
	pendingEnd := time.Duration(float64(j.Latency) * pendingShare)
	processingEnd := j.Latency - time.Duration(float64(j.Latency)*postProcessingShare)
	switch {
	case elapsed < pendingEnd:
		return phase{statusPending, 0, j.CreatedAt}
	case elapsed < processingEnd:
		p := float64(elapsed-pendingEnd) / float64(processingEnd-pendingEnd)
		return phase{statusProcessing, math.Round(p*1e4) / 1e4, j.CreatedAt.Add(pendingEnd)}
	case elapsed < j.Latency:
		return phase{statusPostProcessing, 1, j.CreatedAt.Add(processingEnd)}
	case j.Fail:
		return phase{statusFailed, 1, j.finishAt()}
	default:
		return phase{statusSucceed, 1, j.finishAt()}
	}
}

// newJobID returns a random UUID (version 4): random rather than counted so
// ids never collide across restarts, servers or data directories.
func newJobID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generating a job id: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

// seedFromID picks the seed of a job that asked for a random one (-1):
// random across jobs, fixed for the job, so its outputs are stable.
func seedFromID(id string) int64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return int64(h.Sum64() % (rules.MaxSeed + 1))
}

// store keeps one JSON file per job under DataDir/jobs, each written to a
// temporary file and renamed into place so a crash never leaves half a job.
type store struct {
	dataDir string
	jobsDir string
}

const secretFile = "secret.key"

func openStore(dataDir string) (*store, error) {
	s := &store{dataDir: dataDir, jobsDir: filepath.Join(dataDir, "jobs")}
	if err := os.MkdirAll(s.jobsDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the simulator data directory: %w", err)
	}
	return s, nil
}

// secret returns the key that signs watermark-free URLs, creating it on
// first use, so URLs handed out before a restart stay valid after it.
func (s *store) secret() ([]byte, error) {
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
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generating the URL signing key: %w", err)
	}
	if err := atomicfile.WriteFile(path, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("saving the URL signing key: %w", err)
	}
	return key, nil
}

func (s *store) save(j *job) error {
	b, err := json.MarshalIndent(jobFile{Version: jobFileVersion, job: j}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding job %s: %w", j.ID, err)
	}
	if err := atomicfile.WriteFile(filepath.Join(s.jobsDir, j.ID+".json"), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("saving job %s: %w", j.ID, err)
	}
	return nil
}

// load reads every saved job. Leftover temporary files of an interrupted
// write are removed; a job file that cannot be read is an error rather than
// silently dropped, since losing a job would make a client pay twice.
func (s *store) load() ([]*job, error) {
	entries, err := os.ReadDir(s.jobsDir)
	if err != nil {
		return nil, fmt.Errorf("listing saved jobs: %w", err)
	}
	var jobs []*job
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
			return nil, fmt.Errorf("reading saved job: %w", err)
		}
		f := jobFile{job: &job{}}
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("decoding saved job %s: %w", path, err)
		}
		if f.Version != jobFileVersion {
			return nil, fmt.Errorf("saved job %s has format version %d; this simulator reads version %d", path, f.Version, jobFileVersion)
		}
		j := f.job
		req, aerr := parseRequest(j.Endpoint, j.Body)
		if aerr != nil {
			return nil, fmt.Errorf("saved job %s: its request no longer validates: %s", path, aerr.msg)
		}
		j.req = req
		jobs = append(jobs, j)
	}
	return jobs, nil
}
