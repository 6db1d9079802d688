package simkit

import (
	"encoding/json"
	"image"
	"image/color"
	"math"
	"strconv"
	"strings"
	"time"
)

// Markers a prompt may carry to steer a job of a live provider's
// simulator.
const (
	// FailMarker makes the job fail.
	FailMarker = "[fail]"
	// RefuseMarker makes the provider's moderation refuse the job.
	RefuseMarker = "[nsfw]"
	// WeirdMarker makes the job report, for the middle of its run, a
	// status the provider does not document, before it finishes as usual.
	WeirdMarker = "[weird-status]"
	// SlowMarker makes the job take twenty times the latency: a job
	// still running while others of the same apply are done.
	SlowMarker = "[slow]"
	// QuotaMarker makes the create answered as the provider answers an
	// account out of credit (its own status and words: a balance spent,
	// an account locked for it), making nothing.
	QuotaMarker = "[quota]"
	// ForbiddenMarker makes the create refused with the provider's 403 for
	// a model the account may not use (not a refused key), making
	// nothing, on a provider whose reference has one.
	ForbiddenMarker = "[forbidden]"
)

// End is how a job ends.
type End string

// The ends of a job.
const (
	Succeed End = "succeed"
	Fail    End = "fail"
	Refuse  End = "refuse"
)

// Stage is where a job of a simulator stands; each simulator names it
// with its API's status strings.
type Stage int

// The stages of a job, in order.
const (
	Queued   Stage = iota // made, waiting for a slot (or starting)
	Running               // running, progress rising
	Odd                   // running, reporting a status the provider does not document
	Finished              // ended as its End says
	Canceled              // canceled while running
	Aborted               // canceled before it started
)

// Statuses names the stages in a provider's words, for the APIs whose
// statuses follow the stages one for one; the early share of a run can
// still be reported as queued, as the APIs that show a worker starting
// do.
type Statuses struct {
	Queued, Running, Odd string
	// Succeeded and Failed name a finished job by how it ended.
	Succeeded, Failed string
	// Canceled and Aborted name a job canceled while running and before
	// it started; an API with no word of its own for them reports Failed.
	Canceled, Aborted string
	// StartShare is the share of a run still reported Queued.
	StartShare float64
}

// Name is the status of job r at stage st and progress.
func (n Statuses) Name(r *Run, st Stage, progress float64) string {
	switch {
	case st == Queued, st == Running && progress < n.StartShare:
		return n.Queued
	case st == Running:
		return n.Running
	case st == Odd:
		return n.Odd
	case st == Canceled && n.Canceled != "":
		return n.Canceled
	case st == Aborted && n.Aborted != "":
		return n.Aborted
	case st == Finished && r.End == Succeed:
		return n.Succeeded
	}
	return n.Failed
}

// Run is one job of a simulator. Everything its
// lifecycle needs is fixed when it is made (its start behind the queue,
// its latency, how it ends, its seed), so its stage is a function of the
// clock and survives a restart unchanged.
type Run struct {
	ID string `json:"id"`
	// Endpoint is the create path the job came through; Model the model
	// it ran.
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
	// Version is the model version that ran, where the provider has them.
	Version string `json:"version,omitempty"`
	// Body is the request body as received; Input the model's input in it.
	Body        json.RawMessage `json:"body"`
	Input       json.RawMessage `json:"input"`
	Fingerprint string          `json:"fingerprint"`
	// TokenSHA256 names the job's owner (Owner of its key).
	TokenSHA256 string        `json:"token_sha256"`
	CreatedAt   time.Time     `json:"created_at"`
	StartAt     time.Time     `json:"start_at"`
	Latency     time.Duration `json:"latency_ns"`
	End         End           `json:"end"`
	Weird       bool          `json:"weird,omitempty"`
	// Deadline, when set, cancels the job (Replicate's Cancel-After);
	// CanceledAt is when its owner canceled it.
	Deadline   time.Time `json:"deadline,omitzero"`
	CanceledAt time.Time `json:"canceled_at,omitzero"`
	// What it makes.
	Media
	StatusRequests int `json:"status_requests"`
	DetailRequests int `json:"detail_requests"`
	// Request is the API's own reading of Body, kept with the job so that
	// it is read once: it is not saved (a JobFormat reads it anew).
	Request any `json:"-"`

	dirty bool
}

// Media is what a job makes: Count pictures of Width x Height, or, when
// Seconds > 0, one video of that length.
type Media struct {
	Prompt  string `json:"prompt"`
	Seed    int64  `json:"seed"`
	Count   int    `json:"count"`
	Width   int    `json:"width"`
	Height  int    `json:"height"`
	Seconds int    `json:"seconds,omitempty"`
	// Blank makes every picture black, of its size: what a provider's
	// safety checker hands back in place of a picture it flagged (fal's
	// FLUX endpoints).
	Blank bool `json:"blank,omitempty"`
}

// Video reports whether the job makes a video.
func (m Media) Video() bool { return m.Seconds > 0 }

// InputMedia is the start of what job id makes, read from its input in
// as the live providers spell it: one file, of the prompt in field
// prompt, with in's seed, or, when in sets none, a seed fixed for the
// job (0..maxSeed). The provider's own fields then set the rest.
func InputMedia(id string, in map[string]any, prompt string, maxSeed int64) Media {
	m := Media{Count: 1}
	m.Prompt, _ = in[prompt].(string)
	if n, ok := Number(in["seed"]); ok {
		m.Seed = n
	} else {
		m.Seed = SeedFromID(id, maxSeed)
	}
	return m
}

// InputSeconds is the length of video in's duration asks for, 5 seconds
// when it sets none.
func InputSeconds(in map[string]any) int64 {
	if n, ok := Number(in["duration"]); ok {
		return n
	}
	return 5
}

// MakeVideo makes m one video of secs seconds (bounded by
// ClampSeconds) in the shape of ratio ("16:9").
func (m *Media) MakeVideo(secs int64, ratio string) {
	m.Seconds = ClampSeconds(secs)
	m.Width, m.Height = PictureSize(ratio, VideoShortSide)
}

// FinishAt is when the job reaches its end, if nothing cancels it.
func (r *Run) FinishAt() time.Time { return r.StartAt.Add(r.Latency) }

// StageAt is where the job stands at now, with its progress (0..1) and
// when that stage began.
func (r *Run) StageAt(now time.Time) (Stage, float64, time.Time) {
	stop := r.CanceledAt
	if !r.Deadline.IsZero() && (stop.IsZero() || r.Deadline.Before(stop)) {
		stop = r.Deadline
	}
	if !stop.IsZero() && !now.Before(stop) && stop.Before(r.FinishAt()) {
		if stop.Before(r.StartAt) {
			return Aborted, 0, stop
		}
		return Canceled, r.progress(stop), stop
	}
	switch {
	case now.Before(r.StartAt):
		return Queued, 0, r.CreatedAt
	case now.Before(r.FinishAt()):
		p := r.progress(now)
		if r.Weird && p >= 0.3 && p < 0.7 {
			return Odd, p, r.StartAt.Add(time.Duration(float64(r.Latency) * 0.3))
		}
		return Running, p, r.StartAt
	}
	return Finished, 1, r.FinishAt()
}

func (r *Run) progress(now time.Time) float64 {
	p := float64(now.Sub(r.StartAt)) / float64(r.Latency)
	return math.Round(min(max(p, 0), 1)*1e4) / 1e4
}

// PromptEnd is how a job with prompt ends by its markers, and whether it
// reports an undocumented status on the way.
func PromptEnd(prompt string) (End, bool) {
	weird := strings.Contains(prompt, WeirdMarker)
	switch {
	case strings.Contains(prompt, RefuseMarker):
		return Refuse, weird
	case strings.Contains(prompt, FailMarker):
		return Fail, weird
	}
	return Succeed, weird
}

// Number reads a JSON number, or a string holding one, as a whole number;
// ok is false for anything else.
func Number(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	case json.Number:
		return Number(jsonFloat(n))
	case string:
		if i, err := strconv.ParseInt(strings.TrimSuffix(n, "s"), 10, 64); err == nil {
			return i, true
		}
	}
	return 0, false
}

func jsonFloat(n json.Number) any {
	f, err := n.Float64()
	if err != nil {
		return nil
	}
	return f
}

// Render renders file i of the job: picture i as PNG, or the video as an
// animated GIF of 8 frames a second; ok is false when the job has no such
// file. The bytes depend on the model, the prompt, the seed and i only.
func (m Media) Render(model string, i int) (_ *Cached, ok bool, err error) {
	if m.Video() {
		if i != 0 {
			return nil, false, nil
		}
		sc := NewScene(strings.Join([]string{"video", model, m.Prompt, strconv.FormatInt(m.Seed, 10)}, "\x00"), m.Prompt, 1)
		n := m.Seconds * videoFPS
		frames := make([]*image.Paletted, n)
		for f := range frames {
			frames[f] = sc.Render(m.Width, m.Height, FrameOptions{T: float64(f) / float64(max(n-1, 1)), Caption: true, Timeline: true})
		}
		data, err := EncodeGIF(frames, videoFPS)
		return &Cached{Data: data, ContentType: "image/gif"}, true, err
	}
	if i < 0 || i >= m.Count {
		return nil, false, nil
	}
	if m.Blank {
		black := image.NewPaletted(image.Rect(0, 0, m.Width, m.Height), color.Palette{color.Black})
		data, err := EncodePNG(black)
		return &Cached{Data: data, ContentType: "image/png"}, true, err
	}
	key := strings.Join([]string{"image", model, m.Prompt, strconv.FormatInt(m.Seed, 10), strconv.Itoa(i)}, "\x00")
	img := NewScene(key, m.Prompt, 0).Render(m.Width, m.Height, FrameOptions{Caption: true, TextScale: min(m.Width, m.Height) / 360})
	data, err := EncodePNG(img)
	return &Cached{Data: data, ContentType: "image/png"}, true, err
}

// videoFPS is the frame rate of rendered videos; VideoShortSide their
// short side, small on purpose since a GIF grows with every pixel of
// every frame.
const (
	videoFPS       = 8
	VideoShortSide = 240
)

// ClampSeconds bounds a video's length to what a simulator renders.
func ClampSeconds(n int64) int { return int(min(max(n, 1), 20)) }

// String names the stage, for messages.
func (s Stage) String() string {
	return [...]string{"queued", "running", "odd", "finished", "canceled", "aborted"}[s]
}
