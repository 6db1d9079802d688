package views

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/cwriter"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/words"
	"github.com/genform/genform/reconcile/apply"
)

// Progress renders apply events: live bars on a terminal, one plain line
// per state change otherwise (and with GENFORM_IN_AUTOMATION), JSON lines
// with apply -json.
type Progress interface {
	Event(apply.Event)
	Close()
}

// NewProgress picks the human rendering for this run: live bars on a
// terminal, plain lines otherwise and with GENFORM_IN_AUTOMATION; total
// is the number of changes the run makes.
func NewProgress(env *Streams, total int) Progress {
	switch {
	case !env.Automation() && drawable(env.Stdout):
		return newBarProgress(env.Stdout, total)
	default:
		return &lineProgress{w: env.Stdout, last: map[addrs.Instance]string{}, start: map[addrs.Instance]time.Time{}}
	}
}

// lineProgress prints a line when an instance's phase or service status
// changes, not on every progress tick, so logs stay short.
type lineProgress struct {
	mu    sync.Mutex
	w     io.Writer
	last  map[addrs.Instance]string
	start map[addrs.Instance]time.Time
}

func (p *lineProgress) Event(ev apply.Event) {
	if ev.Phase == apply.PhaseWarning {
		return // apply prints warnings on stderr
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Phase == apply.PhaseRetrying {
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

func (p *lineProgress) Close() {}

func eventLine(ev apply.Event, elapsed time.Duration) string {
	line := words.EventAddr(ev.Addr) + ": "
	msg := words.Event(ev)
	switch ev.Phase {
	case apply.PhaseSubmitting:
		line += "submitting"
	case apply.PhaseSubmitted:
		line += "submitted, job " + ev.GenerationID
		if msg != "" {
			line += " (" + msg + ")"
		}
	case apply.PhaseRunning:
		line += words.Running(ev)
	case apply.PhaseDownloading:
		line += "downloading"
	case apply.PhaseDone:
		line += "done"
		if msg != "" {
			line += ": " + msg
		}
	// Why is said once, in the errors listed when the run ends: a long
	// error repeated in the progress, and again for each instance that
	// waited on it, buries the one line a user must read.
	case apply.PhaseFailed:
		line += "failed (its error is listed at the end)"
	case apply.PhaseSkipped:
		line += "skipped (why is listed at the end)"
	case apply.PhaseInterrupted:
		line += "interrupted"
	case apply.PhaseRetrying:
		line += msg
	default:
		line += ev.Phase.String()
	}
	if elapsed > 0 && ev.Phase != apply.PhaseSubmitting {
		line += fmt.Sprintf(" [%s]", elapsed)
	}
	return line
}

// barProgress draws one live bar per instance in flight and an overall bar.
// An instance that finishes (done, failed, skipped, interrupted) prints one
// lasting line above the bars, saying what it made and how long it took,
// and its bar goes at the next redraw; the overall bar stays at the end.
type barProgress struct {
	mu      sync.Mutex
	p       *mpb.Progress
	overall *mpb.Bar
	// units is the overall bar's progress: jobUnits per finished instance,
	// and what each one in flight has done so far, so that the bar moves
	// and its ETA means something before the first instance finishes.
	units    int64
	finished atomic.Int64
	bars     map[addrs.Instance]*jobBar
	start    map[addrs.Instance]time.Time
	ended    map[addrs.Instance]bool
}

// jobUnits is a job's length on its bar: the service's progress fills 90%
// of it and the download the next 5%.
const jobUnits = 1000

type jobBar struct {
	bar   *mpb.Bar
	units int64
	// status is read by the bar's decorator while it draws.
	status atomic.Pointer[string]
}

// drawable reports whether w is a terminal bars can be drawn on: one that
// reports its size. A pseudo-terminal nobody sized (0×0, as some CI
// runners and containers give) gets the plain lines instead, since mpb
// draws no row on a terminal of no height.
func drawable(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || !IsTerminal(f) {
		return false
	}
	cols, rows, err := cwriter.GetSize(int(f.Fd()))
	return err == nil && cols > 0 && rows > 0
}

func newBarProgress(w io.Writer, total int) *barProgress {
	b := &barProgress{
		bars:  map[addrs.Instance]*jobBar{},
		start: map[addrs.Instance]time.Time{},
		ended: map[addrs.Instance]bool{},
	}
	b.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(100), mpb.WithRefreshRate(150*time.Millisecond))
	counts := func(decor.Statistics) string { return fmt.Sprintf("%d/%d", b.finished.Load(), total) }
	eta := decor.AverageETA(decor.ET_STYLE_GO)
	etaText := func(s decor.Statistics) string {
		if s.Current == 0 {
			return "" // nothing to average yet
		}
		text, _ := eta.Decor(s)
		return "ETA " + text
	}
	b.overall = b.p.AddBar(int64(max(total, 1))*jobUnits,
		mpb.BarPriority(1<<30),
		mpb.PrependDecorators(decor.Name("overall", decor.WCSyncSpaceR), decor.Any(counts, decor.WCSyncSpaceR)),
		mpb.AppendDecorators(
			decor.Percentage(decor.WCSyncSpace),
			decor.Elapsed(decor.ET_STYLE_GO, decor.WCSyncSpace),
			decor.OnCompleteOrOnAbort(decor.Any(etaText, decor.WC{C: decor.DextraSpace}), ""),
		),
	)
	return b
}

func (b *barProgress) Event(ev apply.Event) {
	if ev.Phase == apply.PhaseWarning {
		return // apply prints warnings on stderr
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if ev.Addr.IsZero() {
		if ev.Phase == apply.PhaseRetrying {
			fmt.Fprintln(b.p, eventLine(ev, 0)) // no bar: the check of the service
		}
		return
	}
	if _, ok := b.start[ev.Addr]; !ok {
		b.start[ev.Addr] = ev.Time
	}
	switch ev.Phase {
	case apply.PhaseDone, apply.PhaseFailed, apply.PhaseSkipped, apply.PhaseInterrupted:
		b.finish(ev)
		return
	}
	if b.ended[ev.Addr] {
		return
	}
	jb := b.bars[ev.Addr]
	if jb == nil {
		jb = b.addBar(ev.Addr)
	}
	switch ev.Phase {
	case apply.PhaseRunning:
		jb.setStatus(barStatus(ev))
		b.advance(jb, int64(ev.Progress*900))
	case apply.PhaseDownloading:
		jb.setStatus("downloading")
		b.advance(jb, 950)
	case apply.PhaseRetrying:
		jb.setStatus(words.Event(ev))
	default:
		jb.setStatus(ev.Phase.String())
	}
}

func (jb *jobBar) setStatus(s string) { jb.status.Store(&s) }

// barStatus is what a bar says of a job the service reports on: its
// status, the bar showing the percentage; "job done" once it is.
func barStatus(ev apply.Event) string {
	if ev.JobDone {
		return words.Running(ev)
	}
	return ev.Status
}

// addBar starts the bar of an instance. Once the bar is aborted (the
// instance finished) it draws nothing, so that the line printed in its
// place is never seen beside it.
func (b *barProgress) addBar(addr addrs.Instance) *jobBar {
	jb := &jobBar{}
	jb.setStatus("waiting")
	status := func(decor.Statistics) string { return *jb.status.Load() }
	gone := func(d decor.Decorator) decor.Decorator { return decor.OnAbort(d, "") }
	jb.bar = b.p.AddBar(jobUnits,
		mpb.BarFillerMiddleware(func(base mpb.BarFiller) mpb.BarFiller {
			return mpb.BarFillerFunc(func(w io.Writer, s decor.Statistics) error {
				if s.Aborted {
					return nil
				}
				return base.Fill(w, s)
			})
		}),
		mpb.BarRemoveOnComplete(),
		mpb.PrependDecorators(gone(decor.Name(addr.String(), decor.WCSyncSpaceR)), gone(decor.Any(status, decor.WCSyncSpaceR))),
		mpb.AppendDecorators(gone(decor.Percentage(decor.WCSyncSpace)), gone(decor.Elapsed(decor.ET_STYLE_GO, decor.WCSyncSpace))),
	)
	b.bars[addr] = jb
	return jb
}

// advance moves a job's bar, and the overall bar with it, to units.
func (b *barProgress) advance(jb *jobBar, units int64) {
	units = min(max(units, 0), jobUnits-1)
	if units <= jb.units {
		return // progress the service reports again or lower moves nothing back
	}
	b.units += units - jb.units
	jb.units = units
	jb.bar.SetCurrent(units)
	b.overall.SetCurrent(b.units)
}

// finish prints an instance's lasting line and removes its bar.
func (b *barProgress) finish(ev apply.Event) {
	if b.ended[ev.Addr] {
		return
	}
	b.ended[ev.Addr] = true
	elapsed := ev.Time.Sub(b.start[ev.Addr]).Round(100 * time.Millisecond)
	var done int64
	if jb := b.bars[ev.Addr]; jb != nil {
		delete(b.bars, ev.Addr)
		jb.bar.Abort(true)
		done = jb.units
	}
	fmt.Fprintln(b.p, eventLine(ev, elapsed))
	b.finished.Add(1)
	b.units += jobUnits - done
	b.overall.SetCurrent(b.units)
}

// Close ends the display: bars still in flight go, the overall bar stays
// where it stopped.
func (b *barProgress) Close() {
	b.mu.Lock()
	for _, jb := range b.bars {
		jb.bar.Abort(true)
	}
	b.bars = map[addrs.Instance]*jobBar{}
	b.overall.Abort(false)
	b.mu.Unlock()
	b.p.Wait()
}
