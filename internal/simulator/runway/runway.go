package runway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/genform/genform/internal/simulator/simkit"
)

// Defaults of the simulator, Runway's where it documents them.
var Defaults = simkit.Defaults{
	// The top tier runs 20 generations of a model at once (tier 1 one or
	// two); past it, tasks are THROTTLED until a slot frees up.
	MaxConcurrent: 20,
	// Runway documents no request rate: none unless Options.RPM sets one.
	RPM: -1,
	// Output URLs expire within 24 to 48 hours: the short end.
	URLTTL: 24 * time.Hour,
}

// DefaultDailyCap is the daily generations of one model allowed when
// Options.DailyCap is zero: the top tier's fewest (25,000).
const DefaultDailyCap = 25000

// Version is the X-Runway-Version every request must carry, the one the
// official clients send.
const Version = "2024-11-06"

// The statuses of a task, and the one Runway does not document that
// "[weird-status]" tasks report.
const (
	statusPending   = "PENDING"
	statusThrottled = "THROTTLED"
	statusRunning   = "RUNNING"
	statusSucceeded = "SUCCEEDED"
	statusFailed    = "FAILED"
	statusCancelled = "CANCELLED"
	statusOdd       = "PREPARING"
)

// dailyCapMessage is what Runway answers, with a 429, a create past the
// account's daily task limit.
const dailyCapMessage = "Your daily task limit has been reached."

// noCreditsMessage is what Runway answers a create of an organization
// whose credits do not cover the task.
const noCreditsMessage = "You do not have enough credits to run this task."

const (
	maxBodyBytes = 32 << 20
	// pendingShare is the share of a task's run it still reports PENDING
	// (queued for a worker) before RUNNING.
	pendingShare = 0.1
	// filesKept is how long the core keeps a finished task's files: the
	// simulator deletes none (Runway keeps a task's outputs while it
	// keeps the task); its links expire instead, checked here.
	filesKept = 100 * 365 * 24 * time.Hour
	dayWindow = 24 * time.Hour
)

// Server is the simulated Runway API. It is an http.Handler; its methods
// are safe for concurrent use.
type Server struct {
	*simkit.Server
	linkTTL  time.Duration
	dailyCap int
	signer   *simkit.Signer
	createMu sync.Mutex
}

// New returns a Server configured by opts, loading the tasks saved in
// opts.DataDir when it is set.
func New(opts simkit.Options) (*Server, error) {
	linkTTL := opts.URLTTL
	if linkTTL <= 0 {
		linkTTL = Defaults.URLTTL
	}
	core := opts
	core.URLTTL = filesKept
	frame, err := simkit.NewServer(core, Defaults, "Bearer", refuse, statusName)
	if err != nil {
		return nil, err
	}
	s := &Server{Server: frame, linkTTL: linkTTL, dailyCap: opts.DailyCap}
	if s.dailyCap == 0 {
		s.dailyCap = DefaultDailyCap
	}
	if s.signer, err = simkit.NewSigner(opts.DataDir); err != nil {
		return nil, fmt.Errorf("simulator: %w", err)
	}
	for path := range endpointModels {
		s.Mux.HandleFunc("POST "+path, s.api(true, s.create))
	}
	s.Mux.HandleFunc("GET /v1/tasks/{id}", s.api(false, s.get))
	s.Mux.HandleFunc("DELETE /v1/tasks/{id}", s.api(false, s.delete))
	s.Mux.HandleFunc("GET /v1/organization", s.api(false, s.organization))
	s.Mux.HandleFunc("/v1/", s.api(false, func(w http.ResponseWriter, r *http.Request, _ string) {
		fail(w, http.StatusNotFound, "Not found: "+r.Method+" "+r.URL.Path)
	}))
	s.Mux.HandleFunc("GET /files/{id}/{file}", s.serveFile)
	s.Mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusNotFound, "Not found: "+r.URL.Path)
	})
	return s, nil
}

// statuses are Runway's, but for THROTTLED, which statusName tells from
// PENDING.
var statuses = simkit.Statuses{
	Queued: statusPending, Running: statusRunning, Odd: statusOdd,
	Succeeded: statusSucceeded, Failed: statusFailed,
	Canceled: statusCancelled, Aborted: statusCancelled,
	StartShare: pendingShare,
}

// statusName is task r's status: a task waiting behind the concurrency
// limit (its start put off past its creation) is THROTTLED.
func statusName(r *simkit.Run, st simkit.Stage, progress float64) string {
	if st == simkit.Queued && r.StartAt.After(r.CreatedAt) {
		return statusThrottled
	}
	return statuses.Name(r, st, progress)
}

// api runs the gate every API request passes, then checks the API
// version header, then runs the endpoint.
func (s *Server) api(create bool, e simkit.Endpoint) http.HandlerFunc {
	return s.API(create, func(w http.ResponseWriter, r *http.Request, owner string) {
		switch v := r.Header.Get("X-Runway-Version"); v {
		case Version:
			e(w, r, owner)
		case "":
			fail(w, http.StatusBadRequest, "The X-Runway-Version header is required; use "+Version)
		default:
			fail(w, http.StatusBadRequest, fmt.Sprintf("Unsupported API version %q; use %s", v, Version))
		}
	})
}

func refuse(w http.ResponseWriter, status int, msg string, retryAfter int) {
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	switch status {
	case http.StatusUnauthorized:
		fail(w, status, "Invalid API key ("+msg+")")
	default:
		fail(w, status, msg)
	}
}

// fail answers Runway's error document.
func fail(w http.ResponseWriter, status int, msg string) {
	simkit.WriteJSON(w, status, map[string]any{"error": msg})
}

// endpointModels are the models each create endpoint takes, in the
// client's order (specs).
var endpointModels = func() map[string][]string {
	out := map[string][]string{}
	for _, r := range specOrder {
		out[r.path] = append(out[r.path], r.model)
	}
	return out
}()

// create makes a task of the endpoint's kind, after checking the fields
// every model of it shares.
func (s *Server) create(w http.ResponseWriter, r *http.Request, owner string) {
	raw, err := simkit.ReadBody(w, r, maxBodyBytes)
	if err != nil {
		fail(w, http.StatusBadRequest, "reading the request body: "+err.Error())
		return
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var in map[string]any
	if err := dec.Decode(&in); err != nil || in == nil {
		fail(w, http.StatusBadRequest, "The request body must be a JSON object")
		return
	}
	path := r.URL.Path
	model, _ := in["model"].(string)
	if !contains(endpointModels[path], model) {
		fail(w, http.StatusBadRequest, fmt.Sprintf("Invalid model %q for %s: expected one of %s", model, path, strings.Join(endpointModels[path], ", ")))
		return
	}
	if msg := checkFields(path, model, in); msg != "" {
		fail(w, http.StatusBadRequest, msg)
		return
	}
	// The cap is counted and the task made under one lock, so that
	// creates at once cannot pass it together.
	s.createMu.Lock()
	defer s.createMu.Unlock()
	now := s.Core.Now().UTC()
	if s.capped(owner, model, now) {
		fail(w, http.StatusTooManyRequests, dailyCapMessage)
		return
	}
	if text, _ := in["promptText"].(string); strings.Contains(text, simkit.QuotaMarker) {
		// An organization with too few credits: 400 (the status Runway's
		// reference gives a request it will not act on) with the words
		// its API answered a user of sdk-node (runwayml/sdk-node issue
		// 28; read 2026-12-07). Its monthly spend limit caps the credits
		// an organization may buy, so reaching it ends here too.
		fail(w, http.StatusBadRequest, noCreditsMessage)
		return
	}
	id, err := simkit.NewUUID()
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	run := &simkit.Run{
		ID: id, Endpoint: path, Model: model, Body: raw, Input: raw,
		TokenSHA256: owner, CreatedAt: now, Media: mediaOf(path, id, in),
	}
	if err := s.Core.Make(run); err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	if s.Core.Lose() {
		simkit.Drop(w)
		return
	}
	simkit.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "estimatedCost": cost(estimate(*run))})
}

// The simulator's own prices, in credits: Runway prices each model on
// its pricing page, which the simulator does not copy. A task's estimate
// is what it will cost once it succeeded.
const (
	creditsPerImage  = 5
	creditsPerSecond = 5
)

// estimate is what task run may charge: estimatedCost while it has not
// ended, and its cost once it succeeded. A task that failed or was
// cancelled costs 0, as a fully refunded task reports.
func estimate(run simkit.Run) int {
	if run.Video() {
		return creditsPerSecond * run.Seconds
	}
	return creditsPerImage * run.Count
}

// cost is Runway's {"credits"} object of estimatedCost and cost, which
// the official client's types require of a create's answer and of every
// task (@runwayml/sdk 4.20.1, resources/tasks.ts).
func cost(credits int) map[string]any { return map[string]any{"credits": credits} }

// capped reports whether owner created DailyCap tasks of model in the 24
// hours before now.
func (s *Server) capped(owner, model string, now time.Time) bool {
	if s.dailyCap < 0 {
		return false
	}
	n := 0
	for _, run := range s.Core.List(owner) {
		if !run.CreatedAt.After(now.Add(-dayWindow)) {
			break // newest first: the rest are older still
		}
		if run.Model == model {
			n++
		}
	}
	return n >= s.dailyCap
}

// checkFields checks in against what model takes at the endpoint at
// path (specs), and says what is wrong, or "".
func checkFields(path, model string, in map[string]any) string {
	sp := specs[route{path, model}]
	for _, f := range sp.required {
		if _, ok := in[f]; !ok {
			return fmt.Sprintf("%s is required for model %s", f, model)
		}
	}
	for f := range in {
		if f != "model" && !contains(sp.required, f) && !contains(sp.optional, f) {
			return fmt.Sprintf("Unrecognized key %q for model %s at %s", f, model, path)
		}
	}
	if text, ok := in["promptText"]; ok {
		if t, isText := text.(string); !isText || strings.TrimSpace(t) == "" {
			return "promptText must be a non-empty string"
		}
	}
	if v, ok := in["ratio"]; ok {
		rs, _ := v.(string)
		switch {
		case sp.ratios != nil && !contains(sp.ratios, rs):
			return fmt.Sprintf("Invalid ratio %v for model %s: expected one of %s", v, model, strings.Join(sp.ratios, ", "))
		case sp.ratios == nil && !pixelRatio(rs) && !strings.HasPrefix(rs, "auto"):
			return fmt.Sprintf("ratio must be a resolution such as \"1280:720\", got %v", v)
		}
	}
	for f, values := range sp.enums {
		if v, ok := in[f]; ok {
			if s, _ := v.(string); !contains(values, s) {
				return fmt.Sprintf("Invalid %s %v for model %s: expected one of %s", f, v, model, strings.Join(values, ", "))
			}
		}
	}
	if v, ok := in["duration"]; ok {
		if msg := checkDuration(model, sp, v); msg != "" {
			return msg
		}
	}
	if v, ok := in["seed"]; ok {
		if n, whole := simkit.Number(v); !whole || n < 0 || n > 4294967295 {
			return fmt.Sprintf("seed must be a whole number from 0 to 4294967295, got %v", v)
		}
	}
	if v, ok := in["promptImage"]; ok || path == "/v1/image_to_video" {
		return checkPromptImage(model, v)
	}
	return ""
}

// durationRanges are the lengths, in seconds, the client's descriptions
// of duration name for models whose type says only "number": gen4.5 "an
// integer from 2 to 10", gemini_omni_flash and gemini_omni_flash_1.1 "a
// whole number from 3 to 10" (@runwayml/sdk 4.20.1, read 2026-12-07).
// Where neither the type nor its description names lengths, the
// simulator takes a whole number of seconds from 1 to 30, its own
// choice.
var durationRanges = map[string][2]int64{
	"gen4.5": {2, 10}, "gemini_omni_flash": {3, 10}, "gemini_omni_flash_1.1": {3, 10},
}

// checkDuration checks a duration against what the model takes.
func checkDuration(model string, sp spec, v any) string {
	if s, isText := v.(string); isText && s == "auto" && sp.durationAuto {
		return ""
	}
	n, whole := simkit.Number(v)
	lo, hi := int64(1), int64(30)
	if r, ok := durationRanges[model]; ok {
		lo, hi = r[0], r[1]
	}
	switch {
	case sp.durations != nil && (!whole || !containsInt(sp.durations, n)):
		return fmt.Sprintf("Invalid duration %v for model %s: expected one of %v", v, model, sp.durations)
	case sp.durations == nil && (!whole || n < lo || n > hi):
		return fmt.Sprintf("duration of model %s must be a whole number of seconds from %d to %d, got %v", model, lo, hi, v)
	}
	return ""
}

func containsInt(list []int64, n int64) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}

// referenceModes are the models whose promptImage may also be a list of
// reference images, {uri} without a position (the client: "Use position
// first/last for keyframe mode, or omit position for reference images.
// The two modes cannot be mixed.").
var referenceModes = map[string]bool{
	"hailuo3": true, "seedance2": true, "seedance2_fast": true, "seedance2_mini": true,
	"seedance2_5": true, "wan3": true, "wan3_prime": true,
}

// checkPromptImage checks promptImage: an HTTPS URL or a data URI, or a
// list of one or two {uri, position} with distinct positions "first" and
// "last" (or, for a model in referenceModes, a list of {uri}).
func checkPromptImage(model string, v any) string {
	switch p := v.(type) {
	case nil:
		return "promptImage is required"
	case string:
		if !asset(p) {
			return "promptImage must be an HTTPS URL or a data URI"
		}
		return ""
	case []any:
		if referenceModes[model] && len(p) > 0 && !hasPosition(p) {
			for i, e := range p {
				o, _ := e.(map[string]any)
				if uri, _ := o["uri"].(string); !asset(uri) {
					return fmt.Sprintf("promptImage[%d].uri must be an HTTPS URL or a data URI", i)
				}
			}
			return ""
		}
		if len(p) == 0 || len(p) > 2 {
			return fmt.Sprintf("promptImage takes one or two images, got %d", len(p))
		}
		seen := map[string]bool{}
		for i, e := range p {
			o, _ := e.(map[string]any)
			uri, _ := o["uri"].(string)
			pos, _ := o["position"].(string)
			if !asset(uri) {
				return fmt.Sprintf("promptImage[%d].uri must be an HTTPS URL or a data URI", i)
			}
			if (pos != "first" && pos != "last") || seen[pos] {
				return fmt.Sprintf("promptImage[%d].position must be \"first\" or \"last\", each at most once", i)
			}
			seen[pos] = true
		}
		if !seen["first"] {
			return "promptImage must have a first frame: generating with only a last frame is not supported"
		}
		return ""
	}
	return "promptImage must be a string or a list of {uri, position}"
}

// hasPosition reports whether any image of list names a position.
func hasPosition(list []any) bool {
	for _, e := range list {
		if o, _ := e.(map[string]any); o != nil && o["position"] != nil {
			return true
		}
	}
	return false
}

// asset reports whether s is an input Runway takes: an HTTPS URL naming
// a host, a data URI, or an uploaded file (runway://).
func asset(s string) bool {
	if strings.HasPrefix(s, "data:") {
		return strings.Contains(s, ",")
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" && u.Host != "" || u.Scheme == "runway")
}

// pixelRatio reports whether s is a resolution "W:H" in pixels.
func pixelRatio(s string) bool {
	a, b, ok := strings.Cut(s, ":")
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	return ok && err1 == nil && err2 == nil && x > 0 && y > 0 && x <= 8192 && y <= 8192
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// mediaOf is what a task makes: outputCount pictures (one when unset) at
// the ratio's shape, or, for a video endpoint, one video of duration
// seconds (5 when unset or "auto").
func mediaOf(path, id string, in map[string]any) simkit.Media {
	m := simkit.InputMedia(id, in, "promptText", 4294967295)
	if n, ok := simkit.Number(in["outputCount"]); ok && n >= 1 && n <= 10 {
		m.Count = int(n)
	}
	ratio, _ := in["ratio"].(string)
	if !pixelRatio(ratio) {
		ratio = "1280:720"
	}
	if path == "/v1/text_to_image" {
		m.Width, m.Height = simkit.PictureSize(ratio, 768)
		return m
	}
	m.MakeVideo(simkit.InputSeconds(in), ratio)
	return m
}

// task is the task object of run at now, its output links signed anew.
func (s *Server) task(r *http.Request, run simkit.Run, now time.Time) map[string]any {
	st, progress, _ := run.StageAt(now)
	status := statusName(&run, st, progress)
	t := map[string]any{"id": run.ID, "createdAt": stamp(run.CreatedAt), "status": status}
	switch status {
	case statusSucceeded:
		t["cost"] = cost(estimate(run))
	case statusFailed, statusCancelled:
		t["cost"] = cost(0)
	default:
		t["estimatedCost"] = cost(estimate(run))
	}
	switch status {
	case statusRunning, statusOdd:
		t["progress"] = progress
	case statusFailed:
		if run.End == simkit.Refuse {
			t["failure"] = "The input was rejected by content moderation."
			t["failureCode"] = "SAFETY.INPUT.TEXT"
		} else {
			t["failure"] = "An unexpected error occurred while generating the output (simulated failure)."
			t["failureCode"] = "INTERNAL.BAD_OUTPUT.CODE01"
		}
	case statusSucceeded:
		ext, n := ".png", run.Count
		if run.Video() {
			ext, n = ".gif", 1
		}
		exp := strconv.FormatInt(now.Add(s.linkTTL).UnixMilli(), 10)
		out := make([]string, n)
		for i := range out {
			file := strconv.Itoa(i) + ext
			out[i] = simkit.BaseURL(r) + "/files/" + run.ID + "/" + file + "?exp=" + exp + "&sig=" + s.signer.Sign(linkMessage(run.ID, file, exp))
		}
		t["output"] = out
	}
	return t
}

// linkMessage is what the link to file of task id expiring at exp signs.
func linkMessage(id, file, exp string) string { return id + "/" + file + "?" + exp }

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// get answers the task; a task deleted after it ended is gone.
func (s *Server) get(w http.ResponseWriter, r *http.Request, owner string) {
	run, ok := s.Core.Get(r.PathValue("id"), owner, true)
	if !ok || deleted(run) {
		fail(w, http.StatusNotFound, "Task not found")
		return
	}
	simkit.WriteJSON(w, http.StatusOK, s.task(r, run, s.Core.Now()))
}

// deleted reports whether the task was deleted (DELETE once it ended)
// rather than canceled.
func deleted(run simkit.Run) bool {
	return !run.CanceledAt.IsZero() && !run.CanceledAt.Before(run.FinishAt())
}

// delete cancels a task that has not ended, and deletes one that has;
// either way the answer is 204, and a deleted task is gone.
func (s *Server) delete(w http.ResponseWriter, r *http.Request, owner string) {
	now := s.Core.Now()
	run, ok := s.Core.Cancel(r.PathValue("id"), owner, now)
	if !ok || deleted(run) && !run.CanceledAt.Equal(now) {
		fail(w, http.StatusNotFound, "Task not found")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// organization answers the key's tier and credit balance. It leaves the
// day's usage out: counting it would read the clock, which a request
// that checks a key must not move under tests' stepping clocks.
func (s *Server) organization(w http.ResponseWriter, _ *http.Request, _ string) {
	limits := map[string]any{}
	for _, models := range endpointModels {
		for _, m := range models {
			limits[m] = map[string]any{"maxConcurrentGenerations": s.Core.Opts.MaxConcurrent, "maxDailyGenerations": s.dailyCap}
		}
	}
	simkit.WriteJSON(w, http.StatusOK, map[string]any{
		"creditBalance": 100000,
		"tier":          map[string]any{"maxMonthlyCreditSpend": 10000000, "models": limits},
		"usage":         map[string]any{"models": map[string]any{}},
	})
}

// serveFile serves an output through a link whose signature holds and
// whose time has not passed: an expired link is answered 403, as a
// signed storage URL is.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	id, file := r.PathValue("id"), r.PathValue("file")
	q := r.URL.Query()
	exp, sig := q.Get("exp"), q.Get("sig")
	ms, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || !s.signer.Valid(linkMessage(id, file, exp), sig) {
		http.Error(w, "AccessDenied: the link's signature does not match", http.StatusForbidden)
		return
	}
	if !s.Core.Now().Before(time.UnixMilli(ms)) {
		http.Error(w, "AccessDenied: Request has expired", http.StatusForbidden)
		return
	}
	name, _, _ := strings.Cut(file, ".")
	i, err := strconv.Atoi(name)
	if err != nil {
		http.Error(w, "no such file", http.StatusNotFound)
		return
	}
	s.Core.ServeFile(w, r, id, i, func(w http.ResponseWriter, msg string) {
		http.Error(w, msg, http.StatusNotFound)
	})
}
