package simkit

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// JobsReport is what GET /_sim/jobs serves: enough for a test to prove what
// a client did, such as that nothing was generated twice.
type JobsReport struct {
	// Jobs lists every job, oldest first.
	Jobs []JobInfo `json:"jobs"`
	// Creates counts the accepted create requests (jobs made) per request
	// fingerprint.
	Creates map[string]int `json:"creates"`
	// Requests counts the API requests received since the server started.
	Requests int `json:"requests"`
	// Throttled counts the 429 answers sent since the server started.
	Throttled int `json:"throttled"`
	// Downloads counts the media files served since the server started
	// (the whole file or a part of it): a client that takes its files
	// from elsewhere, such as an object store, asks for none.
	Downloads int `json:"downloads"`
}

// JobInfo describes one job in a JobsReport.
type JobInfo struct {
	ID string `json:"id"`
	// Endpoint is the create path, e.g. /v1/jobs/text2image, /fal-ai/flux/dev
	// or /v1/predictions.
	Endpoint string `json:"endpoint"`
	// Body is the request body as received.
	Body     json.RawMessage `json:"body"`
	Status   string          `json:"status"`
	Progress float64         `json:"progress"`
	// CreatedAt is when the job was created, in UTC.
	CreatedAt   time.Time `json:"created_at"`
	Fingerprint string    `json:"fingerprint"`
	// Seed is the seed the outputs were rendered with: the requested one,
	// or the one picked for a request without one.
	Seed           int64 `json:"seed"`
	StatusRequests int   `json:"status_requests"`
	// DetailRequests counts the requests of the job's result (the
	// creation detail, fal's response, Replicate's prediction).
	DetailRequests int `json:"detail_requests"`
}

// NewJobsReport is the report of jobs (sorted here, oldest first), the
// creates per fingerprint (those above zero), and the request and
// download counts.
func NewJobsReport(jobs []JobInfo, creates map[string]int, requests, throttled, downloads int) JobsReport {
	rep := JobsReport{Jobs: jobs, Creates: make(map[string]int, len(creates)), Requests: requests, Throttled: throttled, Downloads: downloads}
	for fp, n := range creates {
		if n > 0 {
			rep.Creates[fp] = n
		}
	}
	slices.SortFunc(rep.Jobs, func(a, b JobInfo) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return rep
}

// WriteJSON writes v as the whole answer with status. HTML escaping is off
// so messages read as written ("<token>", not "\u003ctoken\u003e").
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Every value written here is built from plain types; failing to
		// encode one is a bug in the simulator.
		panic("simulator: encoding response: " + err.Error())
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes()) //nolint:errcheck // the client hung up; nothing to do
}
