package simulator

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

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

// phase is where a job stands at some instant, in the service's words.
type phase struct {
	status   string
	progress float64
	since    time.Time // when the job entered this status
}

// phaseAt is where job r stands at now. Everything it depends on is
// fixed when the job is made (its creation time, latency and end; the
// service refuses rather than queues a job, so it starts when made), so
// its status is a function of the clock and survives a restart.
func phaseAt(r *simkit.Run, now time.Time) phase {
	elapsed := now.Sub(r.CreatedAt)
	pendingEnd := time.Duration(float64(r.Latency) * pendingShare)
	processingEnd := r.Latency - time.Duration(float64(r.Latency)*postProcessingShare)
	finish := r.CreatedAt.Add(r.Latency)
	switch {
	case elapsed < pendingEnd:
		return phase{statusPending, 0, r.CreatedAt}
	case elapsed < processingEnd:
		p := float64(elapsed-pendingEnd) / float64(processingEnd-pendingEnd)
		return phase{statusProcessing, math.Round(p*1e4) / 1e4, r.CreatedAt.Add(pendingEnd)}
	case elapsed < r.Latency:
		return phase{statusPostProcessing, 1, r.CreatedAt.Add(processingEnd)}
	case r.End == simkit.Fail:
		return phase{statusFailed, 1, finish}
	default:
		return phase{statusSucceed, 1, finish}
	}
}

// requestOf is the request job r was made from, read when it was made
// or loaded.
func requestOf(r *simkit.Run) *request { return r.Request.(*request) }

// jobFileVersion is the version of the per-job file format.
const jobFileVersion = 1

// jobFile is the file of one job in DataDir/jobs: the service's own
// format, older than simkit.Run's, which the data directories of the
// built-in simulator (.genform/simulator) hold.
type jobFile struct {
	Version     int             `json:"version"`
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
	// Counters, written by Server.Close rather than on every poll.
	StatusRequests int `json:"status_requests"`
	DetailRequests int `json:"detail_requests"`
}

// jobFormat writes and reads jobFile, so that the jobs a data directory
// already holds load as they are.
var jobFormat = simkit.JobFormat{
	Encode: func(r *simkit.Run) ([]byte, error) {
		return json.MarshalIndent(jobFile{
			Version: jobFileVersion, ID: r.ID, Endpoint: r.Endpoint, Body: r.Body,
			Fingerprint: r.Fingerprint, TokenSHA256: r.TokenSHA256, CreatedAt: r.CreatedAt,
			Latency: r.Latency, Fail: r.End == simkit.Fail, Seed: r.Seed,
			StatusRequests: r.StatusRequests, DetailRequests: r.DetailRequests,
		}, "", "  ")
	},
	Decode: func(path string, b []byte) (*simkit.Run, error) {
		var f jobFile
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("decoding saved job %s: %w", path, err)
		}
		if f.Version != jobFileVersion {
			return nil, fmt.Errorf("saved job %s has format version %d; this simulator reads version %d", path, f.Version, jobFileVersion)
		}
		req, aerr := parseRequest(f.Endpoint, f.Body)
		if aerr != nil {
			return nil, fmt.Errorf("saved job %s: its request no longer validates: %s", path, aerr.msg)
		}
		r := &simkit.Run{
			ID: f.ID, Endpoint: f.Endpoint, Body: f.Body, Fingerprint: f.Fingerprint,
			TokenSHA256: f.TokenSHA256, CreatedAt: f.CreatedAt, StartAt: f.CreatedAt,
			Latency: f.Latency, End: simkit.Succeed,
			StatusRequests: f.StatusRequests, DetailRequests: f.DetailRequests,
			Request: req,
		}
		if f.Fail {
			r.End = simkit.Fail
		}
		r.Seed = f.Seed
		return r, nil
	},
}
