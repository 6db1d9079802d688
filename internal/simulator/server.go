package simulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/genform/genform/internal/provider/reference/rules"
	"github.com/genform/genform/internal/schema"
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

// defaults are the service's limits, and how its jobs differ from the
// live providers': a create past the concurrency limit is refused (429
// VB-100011) rather than queued, and its job files are its own.
var defaults = simkit.Defaults{
	MaxConcurrent:   DefaultMaxConcurrent,
	RPM:             DefaultRPM,
	URLTTL:          DefaultURLTTL,
	RefuseOverLimit: true,
	Format:          &jobFormat,
}

const maxBodyBytes = rules.MaxRequestBytes

// Server is the simulated generation service, built in simkit's frame
// (its core, route table, gate, jobs report and request log). It is an
// http.Handler; its methods are safe for concurrent use.
type Server struct {
	*simkit.Server
	signer *simkit.Signer // signs watermark-free URLs
}

// New returns a Server configured by opts, loading the jobs saved in
// opts.DataDir when it is set.
func New(opts Options) (*Server, error) {
	s := &Server{}
	frame, err := simkit.NewServer(opts, defaults, "Bearer", s.refuse, nil)
	if err != nil {
		return nil, err
	}
	s.Server = frame
	frame.Phase = func(r *simkit.Run, now time.Time) (string, float64) {
		p := phaseAt(r, now)
		return p.status, p.progress
	}
	if s.signer, err = simkit.NewSigner(opts.DataDir); err != nil {
		return nil, fmt.Errorf("simulator: %w", err)
	}
	s.routes()
	return s, nil
}

// refuse answers the gate's refusals in the service's words: 401
// H-10001001 (with WWW-Authenticate), 429 VB-100012 for the request
// rate, and 500 H-10005001 for an injected error.
func (s *Server) refuse(w http.ResponseWriter, status int, msg string, retryAfter int) {
	e := &apiError{status: status, retryAfter: retryAfter}
	switch status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="genform simulator"`)
		e.code, e.msg = codeUnauthorized, "missing API key: send the header Authorization: Bearer <token>"
		if msg == simkit.WrongKey {
			e.msg = simkit.WrongKey
		}
	case http.StatusTooManyRequests:
		e.code, e.msg = codeMaxRequests, fmt.Sprintf("rate limit reached: at most %d requests per minute", s.Core.Opts.RPM)
	default:
		e.code, e.msg = codeServiceError, "internal service error (injected by the simulator's error rate); retry later"
	}
	e.write(w)
}

// create answers the four job-creation endpoints. The route's path names
// the kind of creation and is kept with the job as its endpoint.
func (s *Server) create(w http.ResponseWriter, r *http.Request, owner string, now time.Time) {
	_, endpoint, _ := strings.Cut(r.Pattern, " ")
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		badRequest(codeContentType, fmt.Sprintf("Content-Type must be application/json, got %q", r.Header.Get("Content-Type"))).write(w)
		return
	}
	body, err := simkit.ReadBody(w, r, maxBodyBytes)
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
	id, err := simkit.NewUUID()
	if err != nil {
		s.internalError(w, err)
		return
	}
	run := &simkit.Run{
		ID:          id,
		Endpoint:    endpoint,
		Body:        json.RawMessage(body),
		TokenSHA256: owner,
		CreatedAt:   now.UTC(),
		End:         simkit.Succeed,
		Request:     req,
	}
	if strings.Contains(req.prompt, failMarker) {
		run.End = simkit.Fail
	}
	run.Seed = req.seed
	if run.Seed == schema.RandomSeed {
		run.Seed = simkit.SeedFromID(id, schema.MaxSeed)
	}
	// The job is on disk before its id is handed out, so a client that
	// records the id can always find the job again after a restart.
	var busy *simkit.Busy
	var bad *simkit.BadBody
	switch err := s.Core.Make(run); {
	case errors.As(err, &bad):
		badRequest(codeMalformed, bad.Error()).write(w)
		return
	case errors.As(err, &busy):
		(&apiError{
			status:     http.StatusTooManyRequests,
			code:       codeMaxConcurrent,
			msg:        fmt.Sprintf("too many concurrent tasks: at most %d generations may be unfinished at once", s.Core.Opts.MaxConcurrent),
			retryAfter: busy.RetryAfter,
		}).write(w)
		return
	case err != nil:
		s.internalError(w, err)
		return
	}
	if s.Core.Lose() {
		// The job is made and counted; its answer is lost.
		simkit.Drop(w)
		return
	}
	writeValue(w, struct {
		GenerationID string `json:"generation_id"`
	}{id})
}

func (s *Server) internalError(w http.ResponseWriter, err error) {
	if logf := s.Core.Opts.Logf; logf != nil {
		logf("internal error: %v", err)
	}
	(&apiError{status: http.StatusInternalServerError, code: codeServiceError, msg: "internal service error: " + err.Error()}).write(w)
}

func (s *Server) status(w http.ResponseWriter, r *http.Request, owner string, now time.Time) {
	run, ok := s.Core.Get(r.PathValue("id"), owner, false)
	if !ok {
		noGeneration(r.PathValue("id")).write(w)
		return
	}
	p := phaseAt(&run, now)
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
	run, ok := s.Core.Get(r.PathValue("id"), owner, true)
	if !ok {
		noGeneration(r.PathValue("id")).write(w)
		return
	}
	p := phaseAt(&run, now)
	req := requestOf(&run)
	base := simkit.BaseURL(r)
	media := base + "/media/" + run.ID + "/"
	d := creationDetail{
		CreationID:     run.ID,
		UserID:         "u-" + owner[:16],
		Username:       "sim-user-" + owner[:6],
		Avatar:         base + "/media/avatar/u-" + owner[:16] + ".png",
		Type:           string(req.kind),
		InputType:      inputTypes[req.kind],
		Prompt:         req.prompt,
		NegativePrompt: req.negativePrompt,
		CreateTime:     run.CreatedAt.UTC().Format(time.RFC3339),
		UpdateTime:     p.since.UTC().Format(time.RFC3339),
		Status:         p.status,
		Outputs:        []output{},
	}
	if req.kind.isVideo() {
		d.OutputType = "video"
		d.Settings.FPS = rules.FPS
		d.Settings.Width, d.Settings.Height = req.videoSize()
	} else {
		d.OutputType = "image"
		d.Settings.Width, d.Settings.Height = req.imageSize()
	}
	// Outputs exist only once the job has succeeded; before that, and for
	// a failed job, the detail carries the status and no URLs.
	if p.status == statusSucceed {
		if req.kind.isVideo() {
			d.VideoURL = media + assetVideo
			d.ThumbnailURL = media + assetVideoThumb
			d.Outputs = append(d.Outputs, output{ID: run.ID + "-0", MediaURL: d.VideoURL, ThumbnailURL: d.ThumbnailURL})
		} else {
			for i := range req.imageNumber {
				d.Outputs = append(d.Outputs, output{ID: fmt.Sprintf("%s-%d", run.ID, i), MediaURL: media + imageAsset(i), ThumbnailURL: media + imageThumbAsset(i)})
			}
			d.ThumbnailURL = d.Outputs[0].ThumbnailURL
		}
	}
	writeValue(w, d)
}

func (s *Server) watermarkFreeURL(w http.ResponseWriter, r *http.Request, owner string, now time.Time) {
	id := r.PathValue("id")
	run, ok := s.Core.Peek(id)
	// Another user's job is answered like a missing one, as the service's
	// H-10002003 code describes.
	if !ok || run.TokenSHA256 != owner {
		noGeneration(id).write(w)
		return
	}
	switch p := phaseAt(&run, now); {
	case !requestOf(&run).kind.isVideo():
		badRequest(codeNotVideo, "creation "+id+" is an image; watermark-free URLs exist only for videos").write(w)
		return
	case p.status == statusFailed:
		badRequest(codeNotSucceeded, "creation "+id+" failed; it has no video").write(w)
		return
	case p.status != statusSucceed:
		badRequest(codeNotSucceeded, "creation "+id+" is "+p.status+"; ask for a watermark-free URL once its status is succeed").write(w)
		return
	}
	expires := now.Add(s.Core.Opts.URLTTL).Unix()
	url := fmt.Sprintf("%s/media/%s/%s?expires=%d&sig=%s", simkit.BaseURL(r), id, assetVideoNoMark, expires, s.signer.Sign(urlMessage(id, expires)))
	writeValue(w, struct {
		URL        string `json:"url"`
		ExpireTime string `json:"expire_time"`
	}{url, time.Unix(expires, 0).UTC().Format("2006-01-02T15:04:05Z")})
}

// urlMessage is what a watermark-free URL signs: the job id and the
// expiry, so neither can be changed without the server's key.
func urlMessage(id string, expires int64) string { return fmt.Sprintf("%s\n%d", id, expires) }

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
		s.send(w, r, r.URL.Path, func() (*simkit.Cached, error) {
			data, err := renderAvatar(user)
			return &simkit.Cached{Data: data, ContentType: "image/png"}, err
		})
		return
	}
	now := s.Core.Now()
	run, ok := s.Core.Peek(id)
	if !ok {
		notFound("no such media file: " + r.URL.Path).write(w)
		return
	}
	if p := phaseAt(&run, now); p.status != statusSucceed {
		notFound("creation " + id + " is " + p.status + "; its media exists once it has succeeded").write(w)
		return
	}
	if asset == assetVideoNoMark {
		if aerr := s.checkSignature(r, id, now); aerr != nil {
			aerr.write(w)
			return
		}
	}
	s.send(w, r, id+"/"+asset, func() (*simkit.Cached, error) {
		data, ct, ok, err := requestOf(&run).renderAsset(asset, run.Seed)
		if !ok || err != nil {
			return nil, err
		}
		return &simkit.Cached{Data: data, ContentType: ct}, nil
	})
}

// send serves the media file name, rendered by render on a miss (see
// simkit.Core.Send), or the service's 404 or 500.
func (s *Server) send(w http.ResponseWriter, r *http.Request, name string, render func() (*simkit.Cached, error)) {
	found, err := s.Core.Send(w, r, name, render)
	switch {
	case err != nil:
		s.internalError(w, err)
	case !found:
		notFound("no such media file: " + r.URL.Path).write(w)
	}
}

func (s *Server) checkSignature(r *http.Request, id string, now time.Time) *apiError {
	q := r.URL.Query()
	expires, err := strconv.ParseInt(q.Get("expires"), 10, 64)
	if err != nil || !s.signer.Valid(urlMessage(id, expires), q.Get("sig")) {
		return &apiError{status: http.StatusForbidden, code: codeForbidden, msg: "the watermark-free URL is not validly signed; request a new one"}
	}
	if now.Unix() >= expires {
		return &apiError{status: http.StatusForbidden, code: codeForbidden, msg: fmt.Sprintf("the watermark-free URL expired at %s; request a new one", time.Unix(expires, 0).UTC().Format(time.RFC3339))}
	}
	return nil
}

// JobsReport is what GET /_sim/jobs serves (see simkit.JobsReport).
type JobsReport = simkit.JobsReport

// JobInfo describes one job in a JobsReport.
type JobInfo = simkit.JobInfo
