package replicate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/genform/genform/internal/simulator/simkit"
)

// Defaults of the simulator, Replicate's where it documents them.
var Defaults = simkit.Defaults{
	// Replicate documents no concurrency limit: none unless
	// Options.MaxConcurrent sets one.
	MaxConcurrent: -1,
	// 600 prediction creates a minute (3000 for other requests).
	RPM: 600,
	// Inputs, outputs and files of API predictions are removed after an
	// hour.
	URLTTL: time.Hour,
}

// The statuses of a prediction, and the one Replicate does not document
// that "[weird-status]" predictions report.
const (
	statusStarting   = "starting"
	statusProcessing = "processing"
	statusSucceeded  = "succeeded"
	statusFailed     = "failed"
	statusCanceled   = "canceled"
	statusAborted    = "aborted"
	statusOdd        = "paused"
)

const (
	maxBodyBytes = 64 << 20
	pageSize     = 100
)

// Server is the simulated Replicate API. It is an http.Handler; its
// methods are safe for concurrent use.
type Server struct {
	*simkit.Server
}

// New returns a Server configured by opts, loading the jobs saved in
// opts.DataDir when it is set.
func New(opts simkit.Options) (*Server, error) {
	frame, err := simkit.NewServer(opts, Defaults, "Bearer", refuse, statuses.Name)
	if err != nil {
		return nil, err
	}
	s := &Server{Server: frame}
	s.Mux.HandleFunc("POST /v1/predictions", s.API(true, s.createVersion))
	s.Mux.HandleFunc("POST /v1/models/{owner}/{name}/predictions", s.API(true, s.createModel))
	s.Mux.HandleFunc("GET /v1/predictions/{id}", s.API(false, s.get))
	s.Mux.HandleFunc("POST /v1/predictions/{id}/cancel", s.API(false, s.cancel))
	s.Mux.HandleFunc("GET /v1/predictions", s.API(false, s.list))
	s.Mux.HandleFunc("GET /v1/account", s.API(false, s.account))
	s.Mux.HandleFunc("/v1/", s.API(false, func(w http.ResponseWriter, r *http.Request, _ string) {
		problem(w, http.StatusNotFound, "Not found", "The requested resource could not be found.", 0)
	}))
	s.Mux.HandleFunc("GET /files/{id}/{file}", s.serveFile)
	s.Mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		problem(w, http.StatusNotFound, "Not found", "no such path: "+r.URL.Path, 0)
	})
	return s, nil
}

// statuses are Replicate's: a prediction still reports "starting" (a
// worker booting) for the first tenth of its run before "processing".
var statuses = simkit.Statuses{
	Queued: statusStarting, Running: statusProcessing, Odd: statusOdd,
	Succeeded: statusSucceeded, Failed: statusFailed,
	Canceled: statusCanceled, Aborted: statusAborted,
	StartShare: 0.1,
}

func refuse(w http.ResponseWriter, status int, msg string, retryAfter int) {
	switch status {
	case http.StatusUnauthorized:
		problem(w, status, "Unauthenticated", "You did not pass a valid authentication token ("+msg+")", 0)
	case http.StatusTooManyRequests:
		problem(w, status, "Request was throttled.", fmt.Sprintf("Request was throttled. Expected available in %d seconds.", retryAfter), retryAfter)
	default:
		problem(w, status, "Internal server error", msg, 0)
	}
}

// problem answers a problem details document.
func problem(w http.ResponseWriter, status int, title, detail string, retryAfter int) {
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	simkit.WriteJSON(w, status, map[string]any{"title": title, "detail": detail, "status": status})
}

type createBody struct {
	Version *string         `json:"version"`
	Input   json.RawMessage `json:"input"`
}

func (s *Server) createVersion(w http.ResponseWriter, r *http.Request, owner string) {
	s.create(w, r, owner, "")
}

func (s *Server) createModel(w http.ResponseWriter, r *http.Request, owner string) {
	s.create(w, r, owner, r.PathValue("owner")+"/"+r.PathValue("name"))
}

// create makes a prediction: of the model named by the path, or of the
// version the body names.
func (s *Server) create(w http.ResponseWriter, r *http.Request, owner, model string) {
	raw, err := simkit.ReadBody(w, r, maxBodyBytes)
	if err != nil {
		problem(w, http.StatusBadRequest, "Bad request", "reading the request body: "+err.Error(), 0)
		return
	}
	var b createBody
	if err := json.Unmarshal(raw, &b); err != nil {
		problem(w, http.StatusBadRequest, "Bad request", "the body is not a JSON object: "+err.Error(), 0)
		return
	}
	dec := json.NewDecoder(bytes.NewReader(b.Input))
	dec.UseNumber()
	var input map[string]any
	if len(b.Input) == 0 || dec.Decode(&input) != nil || input == nil {
		problem(w, http.StatusUnprocessableEntity, "Input validation failed", "input: input is required and must be an object", 0)
		return
	}
	version := ""
	if model == "" {
		if b.Version == nil || *b.Version == "" {
			problem(w, http.StatusUnprocessableEntity, "Input validation failed", "version: version is required", 0)
			return
		}
		var ok bool
		if model, version, ok = parseVersion(*b.Version); !ok {
			problem(w, http.StatusUnprocessableEntity, "Invalid version or not permitted", "The specified version does not exist (or perhaps you don't have permission to use it?)", 0)
			return
		}
	}
	if version == "" {
		version = versionOf(model)
	}
	prompt, _ := input["prompt"].(string)
	switch {
	case strings.Contains(prompt, simkit.QuotaMarker):
		// An account with no credit: 402 with a problem document, the
		// words of Replicate's answer as a user of its JavaScript client
		// reported it (https://github.com/replicate/replicate-javascript/issues/342, read
		// 2026-12-07). Nothing is made.
		problem(w, http.StatusPaymentRequired, "Billing required", "You need to set up billing to run this model. Go to https://replicate.com/account/billing#billing to set it up. If you have recently set up billing, please wait a few minutes before trying again.", 0)
		return
	case strings.Contains(prompt, simkit.ForbiddenMarker):
		// A model the account may not run: 403 (Replicate's HTTP reference
		// lists it beside 404 for a model or version); the words are the
		// simulator's own.
		problem(w, http.StatusForbidden, "Forbidden", "You do not have permission to run "+model+".", 0)
		return
	}
	now := s.Core.Now().UTC()
	var deadline time.Time
	if h := r.Header.Get("Cancel-After"); h != "" {
		d, ok := parseCancelAfter(h)
		if !ok {
			problem(w, http.StatusBadRequest, "Invalid Cancel-After header", "Cancel-After must be a duration of at least 5 seconds, such as 90s, 5m or 1h", 0)
			return
		}
		deadline = now.Add(d)
	}
	id, err := newID()
	if err != nil {
		problem(w, http.StatusInternalServerError, "Internal server error", err.Error(), 0)
		return
	}
	run := &simkit.Run{
		ID: id, Endpoint: r.URL.Path, Model: model, Version: version, Body: raw, Input: b.Input,
		TokenSHA256: owner, CreatedAt: now, Deadline: deadline, Media: mediaOf(model, id, input),
	}
	if err := s.Core.Make(run); err != nil {
		problem(w, http.StatusInternalServerError, "Internal server error", err.Error(), 0)
		return
	}
	if s.Core.Lose() {
		simkit.Drop(w)
		return
	}
	simkit.WriteJSON(w, http.StatusCreated, s.prediction(r, *run, now))
}

// parseVersion reads "owner/name", "owner/name:hash" or a bare 64-digit
// hash (whose model the simulator names after it).
func parseVersion(v string) (model, version string, ok bool) {
	if name, hash, found := strings.Cut(v, ":"); found {
		return name, hash, validModel(name) && isHash(hash)
	}
	if isHash(v) {
		return "simulated/" + v[:8], v, true
	}
	return v, "", validModel(v)
}

func validModel(m string) bool {
	o, n, ok := strings.Cut(m, "/")
	return ok && o != "" && n != "" && !strings.ContainsAny(n, "/ ") && !strings.Contains(o, " ")
}

func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// versionOf is the version an official model runs: a hash of its name,
// so it is the same on every run.
func versionOf(model string) string {
	sum := sha256.Sum256([]byte("version\x00" + model))
	return hex.EncodeToString(sum[:])
}

// parseCancelAfter reads a Cancel-After duration: a number with a unit
// (s, m, h, d, or Go's composite form such as 1m30s), or bare seconds;
// at least 5 seconds.
func parseCancelAfter(h string) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	var d time.Duration
	if n, err := strconv.ParseInt(h, 10, 64); err == nil {
		d = time.Duration(n) * time.Second
	} else if days, ok := strings.CutSuffix(h, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		if err != nil {
			return 0, false
		}
		d = time.Duration(n) * 24 * time.Hour
	} else if d, err = time.ParseDuration(h); err != nil {
		return 0, false
	}
	return d, d >= 5*time.Second
}

// newID is a prediction id as Replicate spells them: 26 lowercase
// base32 letters and digits.
func newID() (string, error) {
	u, err := simkit.NewUUID()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(u))
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	b := make([]byte, 26)
	for i := range b {
		b[i] = alphabet[sum[i]%32]
	}
	return string(b), nil
}

// mediaOf reads what a prediction makes from its input: num_outputs
// pictures (1..4) at aspect_ratio, or, for a video model (its name says
// video or kling, or its input has a duration or a start_image, as
// Replicate's video models take), one video of duration seconds.
func mediaOf(model, id string, in map[string]any) simkit.Media {
	m := simkit.InputMedia(id, in, "prompt", 1<<31-1)
	ratio, _ := in["aspect_ratio"].(string)
	if !knownRatio(ratio) {
		ratio = "1:1"
	}
	_, hasDuration := in["duration"]
	_, hasStart := in["start_image"]
	if strings.Contains(model, "video") || strings.Contains(model, "kling") || hasDuration || hasStart {
		m.MakeVideo(simkit.InputSeconds(in), ratio)
		return m
	}
	if n, ok := simkit.Number(in["num_outputs"]); ok {
		m.Count = int(min(max(n, 1), 4))
	}
	m.Width, m.Height = simkit.PictureSize(ratio, 768)
	return m
}

func knownRatio(r string) bool {
	a, b, ok := strings.Cut(r, ":")
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	return ok && err1 == nil && err2 == nil && x > 0 && y > 0 && x <= 32 && y <= 32
}

// prediction is the prediction object of run at now.
func (s *Server) prediction(r *http.Request, run simkit.Run, now time.Time) map[string]any {
	st, progress, since := run.StageAt(now)
	status := statuses.Name(&run, st, progress)
	base := simkit.BaseURL(r)
	p := map[string]any{
		"id": run.ID, "model": run.Model, "version": run.Version, "input": run.Input,
		"logs": "", "output": nil, "error": nil, "status": status,
		"source": "api", "data_removed": false,
		"created_at": stamp(run.CreatedAt), "started_at": nil, "completed_at": nil,
		"urls": map[string]string{
			"get":    base + "/v1/predictions/" + run.ID,
			"cancel": base + "/v1/predictions/" + run.ID + "/cancel",
			"web":    base + "/p/" + run.ID,
		},
	}
	if !run.Deadline.IsZero() {
		p["deadline"] = stamp(run.Deadline)
	}
	if status != statusStarting && st != simkit.Aborted {
		p["started_at"] = stamp(run.StartAt)
	}
	done := st == simkit.Finished || st == simkit.Canceled || st == simkit.Aborted
	if !done {
		return p
	}
	p["completed_at"] = stamp(since)
	predict := 0.0
	if st != simkit.Aborted {
		predict = since.Sub(run.StartAt).Seconds()
	}
	p["metrics"] = map[string]any{"predict_time": predict, "total_time": since.Sub(run.CreatedAt).Seconds()}
	switch {
	case st != simkit.Finished:
	case run.End == simkit.Fail:
		p["error"] = "simulated failure: the model raised an exception"
	case run.End == simkit.Refuse:
		p["error"] = "All generated images contained NSFW content. Try running it again with a different prompt."
	default:
		files := base + "/files/" + run.ID + "/"
		if run.Video() {
			p["output"] = files + "0.gif"
		} else {
			out := make([]string, run.Count)
			for i := range out {
				out[i] = files + strconv.Itoa(i) + ".png"
			}
			p["output"] = out
		}
	}
	if s.Core.Expired(since, now) {
		p["input"], p["output"], p["data_removed"] = map[string]any{}, nil, true
	}
	return p
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

func (s *Server) get(w http.ResponseWriter, r *http.Request, owner string) {
	run, ok := s.Core.Get(r.PathValue("id"), owner, true)
	if !ok {
		problem(w, http.StatusNotFound, "Not found", "The requested resource could not be found.", 0)
		return
	}
	simkit.WriteJSON(w, http.StatusOK, s.prediction(r, run, s.Core.Now()))
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request, owner string) {
	now := s.Core.Now()
	run, ok := s.Core.Cancel(r.PathValue("id"), owner, now)
	if !ok {
		problem(w, http.StatusNotFound, "Not found", "The requested resource could not be found.", 0)
		return
	}
	simkit.WriteJSON(w, http.StatusOK, s.prediction(r, run, now))
}

// list answers a page of owner's predictions, newest first, filtered by
// created_after (inclusive) and created_before (exclusive).
func (s *Server) list(w http.ResponseWriter, r *http.Request, owner string) {
	q := r.URL.Query()
	var after, before time.Time
	for _, f := range []struct {
		name string
		t    *time.Time
	}{{"created_after", &after}, {"created_before", &before}} {
		if v := q.Get(f.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				problem(w, http.StatusBadRequest, "Bad request", f.name+" must be an ISO 8601 date-time", 0)
				return
			}
			*f.t = t
		}
	}
	start := 0
	if c := q.Get("cursor"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 0 {
			problem(w, http.StatusBadRequest, "Bad request", "invalid cursor", 0)
			return
		}
		start = n
	}
	now := s.Core.Now()
	var all []simkit.Run
	for _, run := range s.Core.List(owner) {
		if (!after.IsZero() && run.CreatedAt.Before(after)) || (!before.IsZero() && !run.CreatedAt.Before(before)) {
			continue
		}
		all = append(all, run)
	}
	results := []map[string]any{}
	for i := start; i < len(all) && i < start+pageSize; i++ {
		results = append(results, s.prediction(r, all[i], now))
	}
	var next any
	if start+pageSize < len(all) {
		q.Set("cursor", strconv.Itoa(start+pageSize))
		next = simkit.BaseURL(r) + "/v1/predictions?" + q.Encode()
	}
	simkit.WriteJSON(w, http.StatusOK, map[string]any{"next": next, "previous": nil, "results": results})
}

func (s *Server) account(w http.ResponseWriter, _ *http.Request, owner string) {
	simkit.WriteJSON(w, http.StatusOK, map[string]any{
		"type": "user", "username": "sim-user-" + owner[:6], "name": "Simulated user", "github_url": nil,
	})
}

func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	name, _, _ := strings.Cut(r.PathValue("file"), ".")
	i, err := strconv.Atoi(name)
	if err != nil {
		problem(w, http.StatusNotFound, "Not found", "no such file: "+r.URL.Path, 0)
		return
	}
	s.Core.ServeFile(w, r, r.PathValue("id"), i, func(w http.ResponseWriter, msg string) {
		problem(w, http.StatusNotFound, "Not found", msg, 0)
	})
}
