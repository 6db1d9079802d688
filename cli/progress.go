package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/genform/genform/config/addrs"
	"github.com/genform/genform/reconcile"
)

// progress renders apply events: live bars on a terminal, one plain line
// per state change otherwise (and with GENFORM_IN_AUTOMATION), JSON lines
// with apply -json.
type progress interface {
	event(reconcile.Event)
	close()
}

// newProgress picks the rendering for this run.
func newProgress(env *Env, asJSON bool, total int) progress {
	switch {
	case asJSON:
		return &jsonProgress{enc: json.NewEncoder(env.Stdout)}
	case isTerminal(env.Stdout) && !env.Automation():
		return newBarProgress(env.Stdout, total)
	default:
		return &lineProgress{w: env.Stdout, last: map[addrs.Instance]string{}, start: map[addrs.Instance]time.Time{}}
	}
}

type jsonProgress struct {
	mu  sync.Mutex
	enc *json.Encoder
}

// eventJSON is one progress line of apply -json.
type eventJSON struct {
	Type         string     `json:"type"`
	Time         time.Time  `json:"time"`
	Address      string     `json:"address"`
	Action       string     `json:"action"`
	Phase        string     `json:"phase"`
	Status       string     `json:"status,omitempty"`
	Progress     float64    `json:"progress,omitempty"`
	GenerationID string     `json:"generation_id,omitempty"`
	Message      string     `json:"message,omitempty"`
	Retry        *retryJSON `json:"retry,omitempty"`
}

func (p *jsonProgress) event(ev reconcile.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	doc := eventJSON{
		Type:         "progress",
		Time:         ev.Time,
		Address:      ev.Addr.String(),
		Action:       ev.Action.String(),
		Phase:        ev.Phase.String(),
		Status:       ev.Status,
		Progress:     ev.Progress,
		GenerationID: ev.GenerationID,
		Message:      eventMessage(ev),
		Retry:        newRetryJSON(ev.Retry),
	}
	if ev.Addr.IsZero() {
		// The apply's own check of the service, before any change.
		doc.Address, doc.Action = "", ""
	}
	p.enc.Encode(doc)
}

// eventMessage is what an event says beyond its phase and status, in words.
func eventMessage(ev reconcile.Event) string {
	switch ev.Phase {
	case reconcile.PhaseSubmitted:
		if ev.Resumed {
			return "resuming"
		}
	case reconcile.PhaseDone:
		switch ev.Action {
		case reconcile.Create, reconcile.Replace, reconcile.Resume:
			return fmt.Sprintf("%d file(s) in %s", ev.Files, ev.Dir)
		case reconcile.Update:
			return reasonText(&reconcile.Change{Addr: ev.Addr, Action: ev.Action, Reason: ev.Reason})
		case reconcile.Restore:
			return fmt.Sprintf("restored generation %s from the history: %d file(s) in %s", ev.GenerationID, ev.Files, ev.Dir)
		case reconcile.Move:
			return "moved from " + ev.PrevAddr.String()
		case reconcile.Delete:
			return "files removed"
		}
	case reconcile.PhaseFailed, reconcile.PhaseSkipped, reconcile.PhaseWarning:
		if ev.Err != nil {
			return ev.Err.Error()
		}
	case reconcile.PhaseRetrying:
		return retryText(ev.Retry)
	}
	return ""
}

func (p *jsonProgress) close() {}

// lineProgress prints a line when an instance's phase or service status
// changes, not on every progress tick, so logs stay short.
type lineProgress struct {
	mu    sync.Mutex
	w     io.Writer
	last  map[addrs.Instance]string
	start map[addrs.Instance]time.Time
}

func (p *lineProgress) event(ev reconcile.Event) {
	if ev.Phase == reconcile.PhaseWarning {
		return // apply prints warnings on stderr
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Phase == reconcile.PhaseRetrying {
		// Every retry is news, however many came before.
		fmt.Fprintln(p.w, eventLine(ev, 0))
		return
	}
	key := ev.Phase.String() + "/" + ev.Status
	if p.last[ev.Addr] == key {
		return
	}
	p.last[ev.Addr] = key
	if _, ok := p.start[ev.Addr]; !ok {
		p.start[ev.Addr] = ev.Time
	}
	elapsed := ev.Time.Sub(p.start[ev.Addr]).Round(100 * time.Millisecond)
	fmt.Fprintln(p.w, eventLine(ev, elapsed))
}

func (p *lineProgress) close() {}

func eventLine(ev reconcile.Event, elapsed time.Duration) string {
	line := addrText(ev.Addr) + ": "
	msg := eventMessage(ev)
	switch ev.Phase {
	case reconcile.PhaseSubmitting:
		line += "submitting"
	case reconcile.PhaseSubmitted:
		line += "submitted, job " + ev.GenerationID
		if msg != "" {
			line += " (" + msg + ")"
		}
	case reconcile.PhaseRunning:
		line += fmt.Sprintf("%s %.0f%%", ev.Status, ev.Progress*100)
	case reconcile.PhaseDownloading:
		line += "downloading"
	case reconcile.PhaseDone:
		line += "done"
		if msg != "" {
			line += ": " + msg
		}
	case reconcile.PhaseFailed:
		line += "failed: " + msg
	case reconcile.PhaseSkipped:
		line += "skipped: " + msg
	case reconcile.PhaseInterrupted:
		line += "interrupted"
	case reconcile.PhaseRetrying:
		line += msg
	default:
		line += ev.Phase.String()
	}
	if elapsed > 0 && ev.Phase != reconcile.PhaseSubmitting {
		line += fmt.Sprintf(" [%s]", elapsed)
	}
	return line
}

// barProgress draws one live bar per instance in flight and an overall bar.
type barProgress struct {
	mu      sync.Mutex
	p       *mpb.Progress
	overall *mpb.Bar
	bars    map[addrs.Instance]*jobBar
}

type jobBar struct {
	bar    *mpb.Bar
	status string
}

func newBarProgress(w io.Writer, total int) *barProgress {
	p := mpb.New(mpb.WithOutput(w), mpb.WithWidth(100), mpb.WithRefreshRate(150*time.Millisecond))
	overall := p.AddBar(int64(max(total, 1)),
		mpb.BarPriority(1<<30),
		mpb.PrependDecorators(decor.Name("overall", decor.WCSyncSpaceR), decor.CountersNoUnit("%d/%d", decor.WCSyncSpace)),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO, decor.WCSyncSpace)),
	)
	return &barProgress{p: p, overall: overall, bars: map[addrs.Instance]*jobBar{}}
}

func (b *barProgress) event(ev reconcile.Event) {
	if ev.Phase == reconcile.PhaseWarning {
		return // apply prints warnings on stderr
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if ev.Phase == reconcile.PhaseRetrying && ev.Addr.IsZero() {
		fmt.Fprintln(b.p, eventLine(ev, 0)) // no bar: the check of the service
		return
	}
	jb := b.bars[ev.Addr]
	if jb == nil {
		jb = &jobBar{status: ev.Phase.String()}
		status := func(decor.Statistics) string { return jb.status }
		jb.bar = b.p.AddBar(1000,
			mpb.BarRemoveOnComplete(),
			mpb.PrependDecorators(decor.Name(ev.Addr.String(), decor.WCSyncSpaceR), decor.Any(status, decor.WCSyncSpaceR)),
			mpb.AppendDecorators(decor.Percentage(decor.WCSyncSpace), decor.Elapsed(decor.ET_STYLE_GO, decor.WCSyncSpace)),
		)
		b.bars[ev.Addr] = jb
	}
	switch ev.Phase {
	case reconcile.PhaseRunning:
		jb.status = ev.Status
		jb.bar.SetCurrent(int64(ev.Progress * 900))
	case reconcile.PhaseDownloading:
		jb.status = "downloading"
		jb.bar.SetCurrent(950)
	case reconcile.PhaseRetrying:
		jb.status = eventMessage(ev)
	case reconcile.PhaseDone, reconcile.PhaseFailed, reconcile.PhaseSkipped, reconcile.PhaseInterrupted:
		if !jb.bar.Completed() {
			jb.bar.SetTotal(-1, true)
			b.overall.Increment()
		}
		if ev.Phase != reconcile.PhaseDone {
			fmt.Fprintln(b.p, eventLine(ev, 0))
		}
	default:
		jb.status = ev.Phase.String()
	}
}

func (b *barProgress) close() {
	b.mu.Lock()
	for _, jb := range b.bars {
		if !jb.bar.Completed() {
			jb.bar.Abort(true)
		}
	}
	b.overall.SetTotal(-1, true)
	b.mu.Unlock()
	b.p.Wait()
}
