package fal

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/genform/genform/internal/simulator/simkit"
)

// Defaults of the simulator, fal's where it documents them.
var Defaults = simkit.Defaults{
	// fal's top tier runs 40 requests at once (a new account 2); past
	// it, requests wait in the queue.
	MaxConcurrent: 40,
	// fal documents no request rate: none unless Options.RPM sets one.
	RPM: -1,
	// Generated media stay on fal's CDN for at least 7 days.
	URLTTL: 7 * 24 * time.Hour,
}

// The statuses of fal's queue, and the one it does not document that
// "[weird-status]" jobs report.
const (
	statusInQueue    = "IN_QUEUE"
	statusInProgress = "IN_PROGRESS"
	statusCompleted  = "COMPLETED"
	statusOdd        = "IN_RETRY"
)

const maxBodyBytes = 64 << 20

// MissingModel is a segment no model id fal serves has: a submit to a
// model id holding it is answered 404, as fal answers a model id it does
// not serve (a misspelled one), before any request exists. The simulator
// serves every other id.
const MissingModel = "no-such-model"

// lockedMessage is fal's answer, with a 403, to every billable request of
// an account locked for its balance (as fal's users report it in its
// issue tracker, https://github.com/fal-ai/fal/issues/1112, /1147 and
// /1162; read 2026-12-07):
// the simulator's answer to a submit whose prompt holds
// simkit.QuotaMarker.
const lockedMessage = "User is locked. Reason: Exhausted balance. Top up your balance at fal.ai/dashboard/billing."

// requestIDHeader names the request an answer is of.
const requestIDHeader = "X-Fal-Request-Id"

// Server is the simulated fal queue. It is an http.Handler; its methods
// are safe for concurrent use.
type Server struct {
	*simkit.Server
}

// New returns a Server configured by opts, loading the jobs saved in
// opts.DataDir when it is set.
func New(opts simkit.Options) (*Server, error) {
	frame, err := simkit.NewServer(opts, Defaults, "Key", refuse, statuses.Name)
	if err != nil {
		return nil, err
	}
	// fal's paths hold a model id of any number of segments, so the
	// route is read from the path rather than a ServeMux pattern.
	s := &Server{Server: frame}
	frame.Handler = http.HandlerFunc(s.route)
	return s, nil
}

// statuses are fal's: a job that ended, however it ended, is COMPLETED.
var statuses = simkit.Statuses{
	Queued: statusInQueue, Running: statusInProgress, Odd: statusOdd,
	Succeeded: statusCompleted, Failed: statusCompleted,
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/_sim/jobs" && r.Method == http.MethodGet:
		simkit.WriteJSON(w, http.StatusOK, s.Jobs())
		return
	case strings.HasPrefix(p, "/files/") && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		s.serveFile(w, r, strings.TrimPrefix(p, "/files/"))
		return
	case p == "/v1/models/pricing" && r.Method == http.MethodGet:
		s.api(w, r, false, func(string) { s.pricing(w, r) })
		return
	}
	segs := strings.Split(strings.Trim(p, "/"), "/")
	if i := indexOf(segs, "requests"); i == 2 && len(segs) >= 4 {
		id, rest := segs[3], strings.Join(segs[4:], "/")
		// fal names the request an answer is of in X-Fal-Request-Id: its
		// client reads the result's request id from it (Result.requestId
		// of subscribe and queue.result), and an error's.
		named := func(endpoint func(owner string)) func(owner string) {
			return func(owner string) {
				w.Header().Set(requestIDHeader, id)
				endpoint(owner)
			}
		}
		switch {
		case rest == "status" && r.Method == http.MethodGet:
			s.api(w, r, false, named(func(owner string) { s.status(w, r, owner, id) }))
		case rest == "" && r.Method == http.MethodGet:
			s.api(w, r, false, named(func(owner string) { s.result(w, r, owner, id) }))
		case rest == "cancel" && r.Method == http.MethodPut:
			s.api(w, r, false, named(func(owner string) { s.cancel(w, owner, id) }))
		default:
			s.api(w, r, false, func(string) { detail(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+p, "") })
		}
		return
	}
	if r.Method == http.MethodPost && len(segs) >= 2 && !slicesHasEmpty(segs) {
		s.api(w, r, true, func(owner string) { s.submit(w, r, owner, strings.Join(segs, "/")) })
		return
	}
	s.api(w, r, false, func(string) { detail(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+p, "") })
}

func indexOf(segs []string, s string) int {
	for i, x := range segs {
		if x == s {
			return i
		}
	}
	return -1
}

func slicesHasEmpty(segs []string) bool {
	for _, s := range segs {
		if s == "" || s == "." || s == ".." {
			return true
		}
	}
	return false
}

// api runs the gate every API request passes, then the endpoint.
func (s *Server) api(w http.ResponseWriter, r *http.Request, create bool, endpoint func(owner string)) {
	s.API(create, func(_ http.ResponseWriter, _ *http.Request, owner string) { endpoint(owner) })(w, r)
}

// refuse answers fal's request-error shape: {"detail", "error_type"},
// with the error type in X-Fal-Error-Type too.
func refuse(w http.ResponseWriter, status int, msg string, retryAfter int) {
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	errType := ""
	switch status {
	case http.StatusInternalServerError:
		errType = "internal_error"
	case http.StatusTooManyRequests:
		errType = "rate_limited"
	}
	detail(w, status, msg, errType)
}

func detail(w http.ResponseWriter, status int, msg, errType string) {
	body := map[string]any{"detail": msg}
	if errType != "" {
		body["error_type"] = errType
		w.Header().Set("X-Fal-Error-Type", errType)
	}
	simkit.WriteJSON(w, status, body)
}

// urls are the URLs of a request, built from the app (the model id's
// owner and alias) as fal builds them.
type urls struct {
	RequestID   string `json:"request_id"`
	ResponseURL string `json:"response_url"`
	StatusURL   string `json:"status_url"`
	CancelURL   string `json:"cancel_url"`
}

func urlsOf(r *http.Request, model, id string) urls {
	segs := strings.SplitN(model, "/", 3)
	base := simkit.BaseURL(r) + "/" + segs[0] + "/" + segs[1] + "/requests/" + id
	return urls{RequestID: id, ResponseURL: base, StatusURL: base + "/status", CancelURL: base + "/cancel"}
}

func (s *Server) submit(w http.ResponseWriter, r *http.Request, owner, model string) {
	body, err := simkit.ReadBody(w, r, maxBodyBytes)
	if err != nil {
		detail(w, http.StatusBadRequest, "reading the request body: "+err.Error(), "bad_request")
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var input map[string]any
	if err := dec.Decode(&input); err != nil || input == nil {
		modelError(w, []any{"body"}, "Input should be a valid dictionary", "dict_type", string(body))
		return
	}
	if refused(w, model, input) {
		return
	}
	id, err := simkit.NewUUID()
	if err != nil {
		detail(w, http.StatusInternalServerError, err.Error(), "internal_error")
		return
	}
	now := s.Core.Now()
	run := &simkit.Run{
		ID: id, Endpoint: "/" + model, Model: model, Body: body, Input: body,
		TokenSHA256: owner, CreatedAt: now.UTC(), Media: mediaOf(model, id, input),
	}
	if prompt := run.Prompt; flux(model) && strings.Contains(prompt, simkit.RefuseMarker) {
		// FLUX's safety checker does not fail the request: it completes,
		// flags every image in has_nsfw_concepts and hands back black
		// ones in their place.
		run.End, run.Weird = simkit.Succeed, strings.Contains(prompt, simkit.WeirdMarker)
		run.Blank = true
	}
	if err := s.Core.Make(run); err != nil {
		detail(w, http.StatusInternalServerError, err.Error(), "internal_error")
		return
	}
	if s.Core.Lose() {
		simkit.Drop(w)
		return
	}
	u := urlsOf(r, model, id)
	simkit.WriteJSON(w, http.StatusOK, struct {
		Status string `json:"status"`
		urls
		QueuePosition int `json:"queue_position"`
	}{statusInQueue, u, s.position(owner, *run, now)})
}

// refused answers, before any request exists, a submit fal refuses: a
// model id it does not serve (404), an account locked for its balance
// (403, for a prompt holding simkit.QuotaMarker), or, on a FLUX model, an
// image_size that is neither one of its presets nor {width, height}
// (422, pydantic's enum error as fal's model errors spell it).
func refused(w http.ResponseWriter, model string, input map[string]any) bool {
	prompt, _ := input["prompt"].(string)
	switch {
	case slices.Contains(strings.Split(model, "/"), MissingModel):
		detail(w, http.StatusNotFound, "Application '"+model+"' not found", "")
		return true
	case strings.Contains(prompt, simkit.QuotaMarker):
		detail(w, http.StatusForbidden, lockedMessage, "")
		return true
	}
	if v, set := input["image_size"]; set && flux(model) {
		if name, ok := v.(string); ok {
			if _, preset := imageSizes[name]; !preset {
				modelError(w, []any{"body", "image_size"}, "Input should be 'square_hd', 'square', 'portrait_4_3', 'portrait_16_9', 'landscape_4_3' or 'landscape_16_9'", "enum", name)
				return true
			}
		}
	}
	return false
}

// flux reports whether model is one of fal's FLUX endpoints, whose
// safety checker flags an image instead of failing the request.
func flux(model string) bool {
	return slices.Contains(strings.Split(model, "/"), "flux") || strings.HasPrefix(model, "fal-ai/flux")
}

// pricing answers GET /v1/models/pricing of fal's Platform API (docs.fal.ai,
// Platform APIs › Models › Pricing; read 2026-12-07): the unit price of
// each endpoint_id asked for (1 to 50, repeated or comma-separated), at
// prices of the simulator's own; none asked is refused 400.
func (s *Server) pricing(w http.ResponseWriter, r *http.Request) {
	var ids []string
	for _, v := range r.URL.Query()["endpoint_id"] {
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 || len(ids) > 50 {
		detail(w, http.StatusBadRequest, "endpoint_id: give 1 to 50 endpoint ids", "bad_request")
		return
	}
	prices := make([]map[string]any, len(ids))
	for i, id := range ids {
		price, unit := 0.025, "image"
		if strings.Contains(id, "video") {
			price, unit = 0.05, "video_second"
		}
		prices[i] = map[string]any{"endpoint_id": id, "unit_price": price, "unit": unit, "currency": "USD"}
	}
	simkit.WriteJSON(w, http.StatusOK, map[string]any{"prices": prices, "next_cursor": nil, "has_more": false})
}

// position is how many of owner's jobs made before run still wait.
func (s *Server) position(owner string, run simkit.Run, now time.Time) int {
	n := 0
	for _, o := range s.Core.List(owner) {
		if st, _, _ := o.StageAt(now); st == simkit.Queued && o.CreatedAt.Before(run.CreatedAt) {
			n++
		}
	}
	return n
}

// mediaOf reads what a job makes from its input: images, num_images of
// them (1..4) of image_size (a preset name, or {width, height}), each of
// max_images images (1..15) when the input sets it, as Seedream 4 makes
// num_images generations of up to max_images images
// (fal.ai/models/fal-ai/bytedance/seedream/v4/text-to-image); or, for a
// model whose id names video (or Veo, fal-ai/veo3.1...), one video of
// duration seconds ("5", or Veo's "8s"; unset, 5, or 8 for Veo, its
// default).
func mediaOf(model, id string, in map[string]any) simkit.Media {
	m := simkit.InputMedia(id, in, "prompt", 1<<31-1)
	veo := strings.HasPrefix(model, "fal-ai/veo")
	if strings.Contains(model, "video") || veo {
		ratio, _ := in["aspect_ratio"].(string)
		if _, ok := ratios[ratio]; !ok {
			ratio = "16:9"
		}
		secs := simkit.InputSeconds(in)
		if _, set := in["duration"]; !set && veo {
			secs = 8
		}
		m.MakeVideo(secs, ratio)
		return m
	}
	if n, ok := simkit.Number(in["num_images"]); ok {
		m.Count = int(min(max(n, 1), 4))
	}
	if n, ok := simkit.Number(in["max_images"]); ok {
		m.Count *= int(min(max(n, 1), 15))
	}
	m.Width, m.Height = 1024, 768 // landscape_4_3, FLUX's default
	switch v := in["image_size"].(type) {
	case string:
		if wh, ok := imageSizes[v]; ok {
			m.Width, m.Height = wh[0], wh[1]
		}
	case map[string]any:
		wd, ok1 := simkit.Number(v["width"])
		ht, ok2 := simkit.Number(v["height"])
		if ok1 && ok2 && wd > 0 && ht > 0 && wd <= 4096 && ht <= 4096 {
			m.Width, m.Height = int(wd), int(ht)
		}
	}
	return m
}

// imageSizes are fal's image_size presets.
var imageSizes = map[string][2]int{
	"square_hd":      {1024, 1024},
	"square":         {512, 512},
	"portrait_4_3":   {768, 1024},
	"portrait_16_9":  {576, 1024},
	"landscape_4_3":  {1024, 768},
	"landscape_16_9": {1024, 576},
}

var ratios = map[string]bool{"16:9": true, "9:16": true, "1:1": true, "4:3": true, "3:4": true, "21:9": true}

// queueStatus is a status answer: the request's URLs, and what its
// status carries.
type queueStatus struct {
	Status string `json:"status"`
	urls
	QueuePosition *int     `json:"queue_position,omitempty"`
	Logs          any      `json:"logs,omitempty"`
	Metrics       *metrics `json:"metrics,omitempty"`
	Error         string   `json:"error,omitempty"`
	ErrorType     string   `json:"error_type,omitempty"`
}

type metrics struct {
	InferenceTime float64 `json:"inference_time"`
}

func (s *Server) status(w http.ResponseWriter, r *http.Request, owner, id string) {
	run, ok := s.Core.Get(id, owner, false)
	if !ok {
		detail(w, http.StatusNotFound, "Request not found", "")
		return
	}
	now := s.Core.Now()
	st, _, _ := run.StageAt(now)
	a := queueStatus{Status: statuses.Name(&run, st, 0), urls: urlsOf(r, run.Model, id), Logs: []any{}}
	code := http.StatusAccepted
	switch st {
	case simkit.Queued:
		pos := s.position(owner, run, now)
		a.QueuePosition, a.Logs = &pos, nil
	case simkit.Finished, simkit.Canceled, simkit.Aborted:
		code = http.StatusOK
		a.Metrics = &metrics{InferenceTime: run.Latency.Seconds()}
		if msg, errType, _ := failure(run, st); msg != "" {
			a.Error, a.ErrorType = msg, errType
		}
	}
	simkit.WriteJSON(w, code, a)
}

// failure is why a completed job has no result: its error, error type
// and the status of its result answer; "" for a job that succeeded.
func failure(run simkit.Run, st simkit.Stage) (msg, errType string, status int) {
	switch {
	case st == simkit.Aborted || st == simkit.Canceled:
		return "Request was cancelled by the client", "client_cancelled", 499
	case run.End == simkit.Fail:
		return "The runner encountered an internal server error", "runner_server_error", http.StatusInternalServerError
	case run.End == simkit.Refuse:
		return "The content was flagged by a content checker.", "content_policy_violation", http.StatusUnprocessableEntity
	}
	return "", "", 0
}

func (s *Server) result(w http.ResponseWriter, r *http.Request, owner, id string) {
	run, ok := s.Core.Get(id, owner, true)
	if !ok {
		detail(w, http.StatusNotFound, "Request not found", "")
		return
	}
	st, _, _ := run.StageAt(s.Core.Now())
	if st != simkit.Finished && st != simkit.Canceled && st != simkit.Aborted {
		detail(w, http.StatusBadRequest, "Request is still in progress", "")
		return
	}
	if msg, errType, code := failure(run, st); msg != "" {
		if errType == "content_policy_violation" {
			modelError(w, []any{"body", "prompt"}, msg, errType, run.Prompt)
			return
		}
		detail(w, code, msg, errType)
		return
	}
	base := simkit.BaseURL(r) + "/files/" + id + "/"
	if run.Video() {
		simkit.WriteJSON(w, http.StatusOK, map[string]any{
			"video": map[string]any{"url": base + "0.gif", "content_type": "image/gif", "file_name": "0.gif"},
			"seed":  run.Seed,
		})
		return
	}
	images := make([]map[string]any, run.Count)
	nsfw := make([]bool, run.Count)
	for i := range nsfw {
		// A black picture is one the safety checker flagged.
		nsfw[i] = run.Blank
	}
	for i := range images {
		images[i] = map[string]any{"url": base + strconv.Itoa(i) + ".png", "width": run.Width, "height": run.Height, "content_type": "image/png"}
	}
	simkit.WriteJSON(w, http.StatusOK, map[string]any{
		"images": images, "seed": run.Seed, "prompt": run.Prompt,
		"has_nsfw_concepts": nsfw, "timings": map[string]any{"inference": run.Latency.Seconds()},
	})
}

// modelError answers fal's model-error shape, 422 with a list of typed
// errors.
func modelError(w http.ResponseWriter, loc []any, msg, typ, input string) {
	simkit.WriteJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []any{map[string]any{
		"loc": loc, "msg": msg, "type": typ, "url": "https://docs.fal.ai/errors#" + typ, "input": input,
	}}})
}

// cancel removes a queued request (it then completes as cancelled); a
// running one is only signalled, and runs on.
func (s *Server) cancel(w http.ResponseWriter, owner, id string) {
	now := s.Core.Now()
	run, ok := s.Core.Get(id, owner, false)
	if !ok {
		simkit.WriteJSON(w, http.StatusNotFound, map[string]string{"status": "NOT_FOUND"})
		return
	}
	switch st, _, _ := run.StageAt(now); st {
	case simkit.Queued:
		s.Core.Cancel(id, owner, now)
	case simkit.Running, simkit.Odd:
	default:
		simkit.WriteJSON(w, http.StatusBadRequest, map[string]string{"status": "ALREADY_COMPLETED"})
		return
	}
	simkit.WriteJSON(w, http.StatusAccepted, map[string]string{"status": "CANCELLATION_REQUESTED"})
}

func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, rest string) {
	id, file, ok := strings.Cut(rest, "/")
	name, _, _ := strings.Cut(file, ".")
	i, err := strconv.Atoi(name)
	if !ok || err != nil || strings.Contains(file, "/") {
		detail(w, http.StatusNotFound, "no such file: "+r.URL.Path, "")
		return
	}
	s.Core.ServeFile(w, r, id, i, func(w http.ResponseWriter, msg string) { detail(w, http.StatusNotFound, msg, "") })
}
