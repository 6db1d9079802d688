package simulator

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/genform/genform/internal/provider/reference/rules"
	"github.com/genform/genform/internal/simulator/simkit"
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

func newJobID() (string, error) { return simkit.NewUUID() }

// seedFromID picks the seed of a job that asked for a random one (-1):
// random across jobs, fixed for the job, so its outputs are stable.
func seedFromID(id string) int64 { return simkit.SeedFromID(id, rules.MaxSeed) }

// saveJob writes j to the data directory.
func saveJob(st *simkit.Store, j *job) error {
	return st.Save(j.ID, jobFile{Version: jobFileVersion, job: j})
}

// loadJobs reads every job saved in the data directory.
func loadJobs(st *simkit.Store) ([]*job, error) {
	var jobs []*job
	err := st.Load(func(path string, b []byte) error {
		f := jobFile{job: &job{}}
		if err := json.Unmarshal(b, &f); err != nil {
			return fmt.Errorf("decoding saved job %s: %w", path, err)
		}
		if f.Version != jobFileVersion {
			return fmt.Errorf("saved job %s has format version %d; this simulator reads version %d", path, f.Version, jobFileVersion)
		}
		j := f.job
		req, aerr := parseRequest(j.Endpoint, j.Body)
		if aerr != nil {
			return fmt.Errorf("saved job %s: its request no longer validates: %s", path, aerr.msg)
		}
		j.req = req
		jobs = append(jobs, j)
		return nil
	})
	return jobs, err
}
