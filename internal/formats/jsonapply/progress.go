package jsonapply

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/words"
	"github.com/genform/genform/reconcile/apply"
)

type Progress struct {
	mu  sync.Mutex
	enc *json.Encoder
}

// Event is one progress line of apply -json.
type Event struct {
	Type         string    `json:"type"`
	Time         time.Time `json:"time"`
	Address      string    `json:"address"`
	Action       string    `json:"action"`
	Phase        string    `json:"phase"`
	Status       string    `json:"status,omitempty"`
	Progress     float64   `json:"progress,omitempty"`
	GenerationID string    `json:"generation_id,omitempty"`
	Message      string    `json:"message,omitempty"`
	Retry        *Retry    `json:"retry,omitempty"`
}

func (p *Progress) Event(ev apply.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	doc := Event{
		Type:         "progress",
		Time:         ev.Time,
		Address:      ev.Addr.String(),
		Action:       ev.Action.String(),
		Phase:        ev.Phase.String(),
		Status:       ev.Status,
		Progress:     ev.Progress,
		GenerationID: ev.GenerationID,
		Message:      words.Event(ev),
		Retry:        encodeRetry(ev.Retry),
	}
	if ev.Addr.IsZero() {
		// The apply's own check of the service, before any change.
		doc.Address, doc.Action = "", ""
	}
	p.enc.Encode(doc)
}

func (p *Progress) Close() {}

// Retry is the retry of an apply -json progress line of phase
// "retrying".
type Retry struct {
	Operation   string  `json:"operation"`
	Attempt     int     `json:"attempt"`
	MaxAttempts int     `json:"max_attempts,omitempty"`
	HTTPStatus  int     `json:"http_status,omitempty"`
	Reason      string  `json:"reason"`
	WaitSeconds float64 `json:"wait_seconds"`
}

func encodeRetry(r *provider.RetryInfo) *Retry {
	if r == nil {
		return nil
	}
	return &Retry{
		Operation: r.Op, Attempt: r.Attempt, MaxAttempts: r.MaxAttempts,
		HTTPStatus: r.HTTPStatus, Reason: r.Reason(), WaitSeconds: r.Wait.Seconds(),
	}
}

// NewProgress writes apply -json's progress lines to w.
func NewProgress(w io.Writer) *Progress { return &Progress{enc: json.NewEncoder(w)} }
