package simulator

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/genform/genform/internal/provider/reference/rules"
	"github.com/genform/genform/internal/simulator/simkit"
)

// Options configures a Server (see simkit.Options). The zero value is a
// server with the real service's limits, two-second jobs, no faults, and
// no persistence. LoseRate drops the answer of that share of the creates
// after their job is made.
type Options = simkit.Options

// Defaults of Options, matching the real service where it documents them.
const (
	DefaultLatency       = simkit.DefaultLatency
	DefaultMaxConcurrent = 40
	DefaultRPM           = 500
	DefaultURLTTL        = 60 * time.Minute
)

const (
	rateWindow   = time.Minute
	maxBodyBytes = rules.MaxRequestBytes
)

// Server is the simulated generation service. It is an http.Handler; its
// methods are safe for concurrent use.
type Server struct {
	opts   Options
	mux    *http.ServeMux // the route table, built by routes
	now    func() time.Time
	logf   func(format string, args ...any)
	secret []byte        // signs watermark-free URLs
	store  *simkit.Store // nil without DataDir
	media  *simkit.MediaCache
	limit  *simkit.Limiter

	mu        sync.Mutex
	jobs      map[string]*job
	creates   map[string]int    // accepted creates per fingerprint
	active    map[string][]*job // per token hash: jobs not seen finished yet
	requests  int
	throttled int
	downloads int

	errRand, truncRand, loseRand *simkit.Draw
}

// New returns a Server configured by opts, loading the jobs saved in
// opts.DataDir when it is set.
func New(opts Options) (*Server, error) {
	if err := opts.CheckRates(); err != nil {
		return nil, err
	}
	if opts.Latency <= 0 {
		opts.Latency = DefaultLatency
	}
	if opts.MaxConcurrent == 0 {
		opts.MaxConcurrent = DefaultMaxConcurrent
	}
	if opts.RPM == 0 {
		opts.RPM = DefaultRPM
	}
	if opts.URLTTL <= 0 {
		opts.URLTTL = DefaultURLTTL
	}
	s := &Server{
		opts:      opts,
		now:       opts.Now,
		logf:      opts.Logf,
		media:     simkit.NewMediaCache(simkit.MediaCacheSize),
		limit:     simkit.NewLimiter(opts.RPM),
		jobs:      map[string]*job{},
		creates:   map[string]int{},
		active:    map[string][]*job{},
		errRand:   simkit.NewDraw(opts.Seed, simkit.StreamError),
		truncRand: simkit.NewDraw(opts.Seed, simkit.StreamTruncate),
		loseRand:  simkit.NewDraw(opts.Seed, simkit.StreamLose),
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.mux = s.routes()
	if opts.DataDir == "" {
		s.secret = make([]byte, 32)
		if _, err := rand.Read(s.secret); err != nil {
			return nil, fmt.Errorf("simulator: generating the URL signing key: %w", err)
		}
		return s, nil
	}
	st, err := simkit.OpenStore(opts.DataDir)
	if err != nil {
		return nil, fmt.Errorf("simulator: %w", err)
	}
	if s.secret, err = st.Secret(); err != nil {
		return nil, fmt.Errorf("simulator: %w", err)
	}
	jobs, err := loadJobs(st)
	if err != nil {
		return nil, fmt.Errorf("simulator: %w", err)
	}
	s.store = st
	now := s.now()
	for _, j := range jobs {
		s.jobs[j.ID] = j
		s.creates[j.Fingerprint]++
		if now.Before(j.finishAt()) {
			s.active[j.TokenSHA256] = append(s.active[j.TokenSHA256], j)
		}
	}
	return s, nil
}

// Close writes the request counters of every job to DataDir. The server
// keeps answering afterwards; Close only makes its state durable.
func (s *Server) Close() error {
	if s.store == nil {
		return nil
	}
	return simkit.Flush(&s.mu, s.jobs, func(j *job) *bool { return &j.dirty }, func(j *job) error { return saveJob(s.store, j) })
}

// ServeHTTP answers a request as the route table (see routes) says, and
// logs it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	if cleanPath(r.URL.EscapedPath()) {
		s.mux.ServeHTTP(rec, r)
	} else {
		s.uncleanPath(rec, r)
	}
	if s.logf != nil {
		s.logf("%s %s %d %s", r.Method, r.URL.Path, rec.status, time.Since(start).Round(time.Microsecond))
	}
}

// statusRecorder remembers the status code for the request log. Unwrap
// lets http.ResponseController reach the connection for truncated
// downloads.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// authenticate checks the bearer token and returns the token's hash, which
// names its owner in limits and job ownership.
func (s *Server) authenticate(r *http.Request) (string, *apiError) {
	h := r.Header.Get("Authorization")
	scheme, token, _ := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if h == "" || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", &apiError{status: http.StatusUnauthorized, code: codeUnauthorized, msg: "missing API key: send the header Authorization: Bearer <token>"}
	}
	if s.opts.Token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.opts.Token)) != 1 {
		return "", &apiError{status: http.StatusUnauthorized, code: codeUnauthorized, msg: "invalid API key"}
	}
	return simkit.Owner(token), nil
}

// admit enforces RPM over a sliding window. Refused requests do not count
// against the window, so a client that waits Retry-After gets through.
func (s *Server) admit(owner string, now time.Time) *apiError {
	retryAfter, ok := s.limit.Admit(owner, now)
	if ok {
		return nil
	}
	s.mu.Lock()
	s.throttled++
	s.mu.Unlock()
	return &apiError{
		status:     http.StatusTooManyRequests,
		code:       codeMaxRequests,
		msg:        fmt.Sprintf("rate limit reached: at most %d requests per minute", s.opts.RPM),
		retryAfter: retryAfter,
	}
}

// create answers the four job-creation endpoints. The route's path names
// the kind of creation and is kept with the job as its endpoint.
func (s *Server) create(w http.ResponseWriter, r *http.Request, owner string, now time.Time) {
	_, endpoint, _ := strings.Cut(r.Pattern, " ")
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		badRequest(codeContentType, fmt.Sprintf("Content-Type must be application/json, got %q", r.Header.Get("Content-Type"))).write(w)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			badRequest(codeMalformed, fmt.Sprintf("request body is larger than %d bytes", tooBig.Limit)).write(w)
		} else {
			badRequest(codeMalformed, "reading the request body: "+err.Error()).write(w)
		}
		return
	}
	req, aerr := parseRequest(endpoint, body)
	if aerr != nil {
		aerr.write(w)
		return
	}
	fp, err := fingerprint(endpoint, body)
	if err != nil {
		badRequest(codeMalformed, err.Error()).write(w)
		return
	}
	id, err := newJobID()
	if err != nil {
		s.internalError(w, err)
		return
	}
	j := &job{
		ID:          id,
		Endpoint:    endpoint,
		Body:        json.RawMessage(slices.Clone(bytes.TrimSpace(body))),
		Fingerprint: fp,
		TokenSHA256: owner,
		CreatedAt:   now.UTC(),
		Latency:     s.opts.Latency,
		Seed:        req.seed,
		req:         req,
	}
	if j.Seed == -1 {
		j.Seed = seedFromID(id)
	}

	s.mu.Lock()
	if aerr := s.checkConcurrency(owner, now); aerr != nil {
		s.throttled++
		s.mu.Unlock()
		aerr.write(w)
		return
	}
	j.Fail = strings.Contains(req.prompt, failMarker) || simkit.FailsAtRandom(s.opts.Seed, s.opts.FailRate, fp, s.creates[fp])
	s.jobs[id] = j
	s.creates[fp]++
	s.active[owner] = append(s.active[owner], j)
	snapshot := *j
	s.mu.Unlock()

	// The job is on disk before its id is handed out, so a client that
	// records the id can always find the job again after a restart.
	if s.store != nil {
		if err := saveJob(s.store, &snapshot); err != nil {
			s.mu.Lock()
			delete(s.jobs, id)
			s.creates[fp]--
			s.active[owner] = slices.DeleteFunc(s.active[owner], func(a *job) bool { return a == j })
			s.mu.Unlock()
			s.internalError(w, err)
			return
		}
	}
	if s.loseRand.Happens(s.opts.LoseRate) {
		// The job is made and counted; its answer is lost.
		simkit.Drop(w)
		return
	}
	writeValue(w, struct {
		GenerationID string `json:"generation_id"`
	}{id})
}

// checkConcurrency refuses a new job when owner already has MaxConcurrent
// unfinished ones. Called with s.mu held.
func (s *Server) checkConcurrency(owner string, now time.Time) *apiError {
	if s.opts.MaxConcurrent < 0 {
		return nil
	}
	running := slices.DeleteFunc(s.active[owner], func(j *job) bool { return !now.Before(j.finishAt()) })
	s.active[owner] = running
	if len(running) < s.opts.MaxConcurrent {
		return nil
	}
	first := running[0].finishAt()
	for _, j := range running[1:] {
		if j.finishAt().Before(first) {
			first = j.finishAt()
		}
	}
	return &apiError{
		status:     http.StatusTooManyRequests,
		code:       codeMaxConcurrent,
		msg:        fmt.Sprintf("too many concurrent tasks: at most %d generations may be unfinished at once", s.opts.MaxConcurrent),
		retryAfter: ceilSeconds(first.Sub(now)),
	}
}

func (s *Server) internalError(w http.ResponseWriter, err error) {
	if s.logf != nil {
		s.logf("internal error: %v", err)
	}
	(&apiError{status: http.StatusInternalServerError, code: codeServiceError, msg: "internal service error: " + err.Error()}).write(w)
}

// lookup returns the job id owned by owner. Another user's job is answered
// like a missing one, as the service's H-10002003 code describes.
func (s *Server) lookup(id, owner string) (*job, *apiError) {
	j, ok := s.jobs[id]
	if !ok || j.TokenSHA256 != owner {
		return nil, noGeneration(id)
	}
	return j, nil
}

// poll finds the job a status or detail request names, for owner, counts
// the request in the counter count picks, and returns the job and its
// phase at now. A job owner does not have is answered here, and ok is
// false.
func (s *Server) poll(w http.ResponseWriter, r *http.Request, owner string, now time.Time, count func(*job) *int) (j *job, p phase, ok bool) {
	id := r.PathValue("id")
	s.mu.Lock()
	j, aerr := s.lookup(id, owner)
	if aerr != nil {
		s.mu.Unlock()
		aerr.write(w)
		return nil, phase{}, false
	}
	*count(j)++
	j.dirty = true
	p = j.phaseAt(now)
	s.mu.Unlock()
	return j, p, true
}

func (s *Server) status(w http.ResponseWriter, r *http.Request, owner string, now time.Time) {
	_, p, ok := s.poll(w, r, owner, now, func(j *job) *int { return &j.StatusRequests })
	if !ok {
		return
	}
	writeValue(w, struct {
		Status   string  `json:"status"`
		Progress float64 `json:"progress"`
	}{p.status, p.progress})
}

// creationDetail is the value of Get Creation Detail: every field the
// service lists, in its order (docs/service.md).
type creationDetail struct {
	CreationID     string `json:"creation_id"`
	UserID         string `json:"user_id"`
	Username       string `json:"username"`
	Avatar         string `json:"avatar"`
	Type           string `json:"type"`
	InputType      string `json:"input_type"`
	Prompt         string `json:"prompt"`
	NegativePrompt string `json:"negative_prompt"`
	CreateTime     string `json:"create_time"`
	UpdateTime     string `json:"update_time"`
	Status         string `json:"status"`
	VideoURL       string `json:"video_url"`
	ThumbnailURL   string `json:"thumbnail_url"`
	Settings       struct {
		FPS    int `json:"fps"`
		Width  int `json:"width"`
		Height int `json:"height"`
	} `json:"settings"`
	Commits struct {
		LikeCount     int  `json:"like_count"`
		IsLike        bool `json:"is_like"`
		CollectsCount int  `json:"collects_count"`
		IsCollect     bool `json:"is_collect"`
	} `json:"commits"`
	OutputType string   `json:"output_type"`
	Outputs    []output `json:"outputs"`
}

type output struct {
	ID           string `json:"id"`
	MediaURL     string `json:"media_url"`
	ThumbnailURL string `json:"thumbnail_url"`
}

var inputTypes = map[kind]string{kindText2Image: "text", kindText2Video: "text", kindImage2Video: "image", kindAFC: "keyframes"}

func (s *Server) detail(w http.ResponseWriter, r *http.Request, owner string, now time.Time) {
	j, p, ok := s.poll(w, r, owner, now, func(j *job) *int { return &j.DetailRequests })
	if !ok {
		return
	}

	base := baseURL(r)
	media := base + "/media/" + j.ID + "/"
	d := creationDetail{
		CreationID:     j.ID,
		UserID:         "u-" + owner[:16],
		Username:       "sim-user-" + owner[:6],
		Avatar:         base + "/media/avatar/u-" + owner[:16] + ".png",
		Type:           string(j.req.kind),
		InputType:      inputTypes[j.req.kind],
		Prompt:         j.req.prompt,
		NegativePrompt: j.req.negativePrompt,
		CreateTime:     j.CreatedAt.UTC().Format(time.RFC3339),
		UpdateTime:     p.since.UTC().Format(time.RFC3339),
		Status:         p.status,
		Outputs:        []output{},
	}
	if j.req.kind.isVideo() {
		d.OutputType = "video"
		d.Settings.FPS = rules.FPS
		d.Settings.Width, d.Settings.Height = j.videoSize()
	} else {
		d.OutputType = "image"
		d.Settings.Width, d.Settings.Height = j.imageSize()
	}
	// Outputs exist only once the job has succeeded; before that, and for
	// a failed job, the detail carries the status and no URLs.
	if p.status == statusSucceed {
		if j.req.kind.isVideo() {
			d.VideoURL = media + assetVideo
			d.ThumbnailURL = media + assetVideoThumb
			d.Outputs = append(d.Outputs, output{ID: j.ID + "-0", MediaURL: d.VideoURL, ThumbnailURL: d.ThumbnailURL})
		} else {
			for i := range j.req.imageNumber {
				d.Outputs = append(d.Outputs, output{ID: fmt.Sprintf("%s-%d", j.ID, i), MediaURL: media + imageAsset(i), ThumbnailURL: media + imageThumbAsset(i)})
			}
			d.ThumbnailURL = d.Outputs[0].ThumbnailURL
		}
	}
	writeValue(w, d)
}

func (s *Server) watermarkFreeURL(w http.ResponseWriter, r *http.Request, owner string, now time.Time) {
	id := r.PathValue("id")
	s.mu.Lock()
	j, aerr := s.lookup(id, owner)
	var p phase
	if aerr == nil {
		p = j.phaseAt(now)
	}
	s.mu.Unlock()
	switch {
	case aerr != nil:
		aerr.write(w)
		return
	case !j.req.kind.isVideo():
		badRequest(codeNotVideo, "creation "+id+" is an image; watermark-free URLs exist only for videos").write(w)
		return
	case p.status == statusFailed:
		badRequest(codeNotSucceeded, "creation "+id+" failed; it has no video").write(w)
		return
	case p.status != statusSucceed:
		badRequest(codeNotSucceeded, "creation "+id+" is "+p.status+"; ask for a watermark-free URL once its status is succeed").write(w)
		return
	}
	expires := now.Add(s.opts.URLTTL).Unix()
	url := fmt.Sprintf("%s/media/%s/%s?expires=%d&sig=%s", baseURL(r), id, assetVideoNoMark, expires, s.sign(id, expires))
	writeValue(w, struct {
		URL        string `json:"url"`
		ExpireTime string `json:"expire_time"`
	}{url, time.Unix(expires, 0).UTC().Format("2006-01-02T15:04:05Z")})
}

// sign is the signature of a watermark-free URL: an HMAC of the job id and
// the expiry, so neither can be changed without the server's key.
func (s *Server) sign(id string, expires int64) string {
	m := hmac.New(sha256.New, s.secret)
	fmt.Fprintf(m, "%s\n%d", id, expires)
	return hex.EncodeToString(m.Sum(nil))
}

// baseURL is the scheme and host the client reached the server at, so
// media URLs work through whatever address the client used.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func ceilSeconds(d time.Duration) int { return simkit.CeilSeconds(d) }

// serveMedia serves rendered files, /media/{id}/{file}, and avatars,
// /media/avatar/{user}.png. Media URLs need no token, like the storage
// links of the real service, and do not count against RPM.
func (s *Server) serveMedia(w http.ResponseWriter, r *http.Request) {
	id, asset := r.PathValue("id"), r.PathValue("file")
	if id == "avatar" {
		user, ok := strings.CutSuffix(asset, ".png")
		if !ok || user == "" {
			notFound("no such media file: " + r.URL.Path).write(w)
			return
		}
		f, err := s.media.Get(r.URL.Path, func() (*simkit.Cached, error) {
			data, err := renderAvatar(user)
			return &simkit.Cached{Data: data, ContentType: "image/png"}, err
		})
		if err != nil {
			s.internalError(w, err)
			return
		}
		s.sendMedia(w, r, f)
		return
	}
	now := s.now()
	s.mu.Lock()
	j, ok := s.jobs[id]
	var p phase
	if ok {
		p = j.phaseAt(now)
	}
	s.mu.Unlock()
	if !ok {
		notFound("no such media file: " + r.URL.Path).write(w)
		return
	}
	if p.status != statusSucceed {
		notFound("creation " + id + " is " + p.status + "; its media exists once it has succeeded").write(w)
		return
	}
	if asset == assetVideoNoMark {
		if aerr := s.checkSignature(r, id, now); aerr != nil {
			aerr.write(w)
			return
		}
	}
	f, err := s.media.Get(id+"/"+asset, func() (*simkit.Cached, error) {
		data, ct, ok, err := j.renderAsset(asset)
		if !ok || err != nil {
			return nil, err
		}
		return &simkit.Cached{Data: data, ContentType: ct}, nil
	})
	if err != nil {
		s.internalError(w, err)
		return
	}
	if f == nil {
		notFound("no such media file: " + r.URL.Path).write(w)
		return
	}
	s.sendMedia(w, r, f)
}

func (s *Server) checkSignature(r *http.Request, id string, now time.Time) *apiError {
	q := r.URL.Query()
	expires, err := strconv.ParseInt(q.Get("expires"), 10, 64)
	if err != nil || !hmac.Equal([]byte(q.Get("sig")), []byte(s.sign(id, expires))) {
		return &apiError{status: http.StatusForbidden, code: codeForbidden, msg: "the watermark-free URL is not validly signed; request a new one"}
	}
	if now.Unix() >= expires {
		return &apiError{status: http.StatusForbidden, code: codeForbidden, msg: fmt.Sprintf("the watermark-free URL expired at %s; request a new one", time.Unix(expires, 0).UTC().Format(time.RFC3339))}
	}
	return nil
}

// sendMedia writes a media file, or cuts the TruncateRate share of
// downloads short (see simkit.SendMedia).
func (s *Server) sendMedia(w http.ResponseWriter, r *http.Request, f *simkit.Cached) {
	s.mu.Lock()
	s.downloads++
	s.mu.Unlock()
	simkit.SendMedia(w, r, f, s.truncRand, s.opts.TruncateRate)
}

// JobsReport is what GET /_sim/jobs serves (see simkit.JobsReport).
type JobsReport = simkit.JobsReport

// JobInfo describes one job in a JobsReport.
type JobInfo = simkit.JobInfo

// serveJobs serves GET /_sim/jobs, which needs no token.
func (s *Server) serveJobs(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Jobs())
}

// Jobs returns what GET /_sim/jobs serves.
func (s *Server) Jobs() JobsReport {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	jobs := make([]JobInfo, 0, len(s.jobs))
	for _, j := range s.jobs {
		p := j.phaseAt(now)
		jobs = append(jobs, JobInfo{
			ID:             j.ID,
			Endpoint:       j.Endpoint,
			Body:           j.Body,
			Status:         p.status,
			Progress:       p.progress,
			CreatedAt:      j.CreatedAt,
			Fingerprint:    j.Fingerprint,
			Seed:           j.Seed,
			StatusRequests: j.StatusRequests,
			DetailRequests: j.DetailRequests,
		})
	}
	return simkit.NewJobsReport(jobs, s.creates, s.requests, s.throttled, s.downloads)
}
