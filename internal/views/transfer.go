package views

import (
	"fmt"
	"sync"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/genform/genform/internal/operation/outcome"
	"github.com/genform/genform/internal/words"
)

// The views of pull and push: a bar of files and bytes on a terminal,
// and the closing lines.

// Transfer is the view of genform pull and genform push.
type Transfer interface {
	// Progress shows how far the transfer is, as
	// operation.TransferOptions.Progress hears it.
	Progress(done, total int, bytes, totalBytes int64)
	// Result ends the transfer with what it did; res is nil when it
	// failed before it moved anything.
	Result(res *outcome.Transfer)
}

// NewTransfer is the view of pull (pull true) or push, whose transfer
// starts now.
func NewTransfer(s *Streams, pull bool) Transfer {
	return &transferHuman{Streams: s, pull: pull, start: time.Now()}
}

type transferHuman struct {
	*Streams
	pull  bool
	start time.Time
	bar   *transferProgress
}

func (v *transferHuman) Progress(done, total int, bytes, totalBytes int64) {
	if v.bar == nil {
		verb := "pull"
		if !v.pull {
			verb = "push"
		}
		v.bar = newTransferProgress(v.Streams, verb, total, totalBytes)
	}
	v.bar.Update(done, total, bytes, totalBytes)
}

func (v *transferHuman) Result(res *outcome.Transfer) {
	if v.bar != nil {
		v.bar.Close()
	}
	if res != nil {
		writeTransfer(v.Streams, v.pull, res, time.Since(v.start))
	}
}

// transferProgress shows a pull or push as it goes: on a terminal, a bar
// of the bytes moved (so one large video moves it too) with the files
// done beside it; nothing otherwise (the closing line says it all).
type transferProgress struct {
	mu          sync.Mutex
	p           *mpb.Progress
	bar         *mpb.Bar
	done, total int
	bytes       int64
}

// newTransferProgress starts the bar of a transfer of total files of
// totalBytes in all, or returns a progress that shows nothing when stdout
// is no terminal.
func newTransferProgress(env *Streams, verb string, total int, totalBytes int64) *transferProgress {
	t := &transferProgress{total: total}
	if total == 0 || env.Automation() || !drawable(env.Stdout) {
		return t
	}
	files := decor.Any(func(decor.Statistics) string {
		t.mu.Lock()
		defer t.mu.Unlock()
		return fmt.Sprintf("%d/%d files", t.done, t.total)
	}, decor.WCSyncSpaceR)
	t.p = mpb.New(mpb.WithOutput(env.Stdout), mpb.WithWidth(80), mpb.WithRefreshRate(150*time.Millisecond))
	t.bar = t.p.AddBar(max(totalBytes, 1),
		mpb.PrependDecorators(decor.Name(verb, decor.WCSyncSpaceR), files, decor.CountersKibiByte("% .1f / % .1f", decor.WCSyncSpaceR)),
		mpb.AppendDecorators(decor.Percentage(decor.WCSyncSpace), decor.Elapsed(decor.ET_STYLE_GO, decor.WCSyncSpace)),
	)
	return t
}

// Update is what operation.TransferOptions.Progress hears.
func (t *transferProgress) Update(done, total int, bytes, totalBytes int64) {
	if t.bar == nil {
		return
	}
	t.mu.Lock()
	t.done = done
	moved := bytes - t.bytes
	t.bytes = max(t.bytes, bytes)
	t.mu.Unlock()
	if moved > 0 {
		t.bar.IncrInt64(moved)
	}
}

// Close ends the bar.
func (t *transferProgress) Close() {
	if t.p == nil {
		return
	}
	t.bar.Abort(false)
	t.p.Wait()
}

// writeTransfer writes the closing lines of a pull or push: what moved, then
// each file that did not, with what to do, on stderr.
func writeTransfer(env *Streams, pull bool, res *outcome.Transfer, elapsed time.Duration) {
	moved, present := "fetched from the store", "already in place"
	if !pull {
		moved, present = "uploaded to the store", "already in the store"
	}
	rate := ""
	if secs := elapsed.Seconds(); res.Bytes > 0 && secs > 0 {
		rate = fmt.Sprintf(" at %s/s", humanize.IBytes(uint64(float64(res.Bytes)/secs)))
	}
	line := fmt.Sprintf("%d file%s %s (%s%s), %d %s.", res.Moved, words.Plural(res.Moved), moved, humanize.IBytes(uint64(res.Bytes)), rate, res.Present, present)
	if len(res.Failed) == 0 {
		fmt.Fprintf(env.Stdout, "%s %s\n", colGreen.Sprint(colBold.Sprint("Done.")), line)
		return
	}
	fmt.Fprintf(env.Stdout, "%s %s\n", colRed.Sprint(colBold.Sprint("Finished with errors.")), line)
	for _, f := range res.Failed {
		switch {
		case f.Addr.IsZero():
			env.Errorf("%v", f.Err)
		case f.Generation != "":
			env.Errorf("%s: %s (generation %s in the history): %v", f.Addr, f.Path, f.Generation, f.Err)
		default:
			env.Errorf("%s: %s: %v", f.Addr, f.Path, f.Err)
		}
	}
}
