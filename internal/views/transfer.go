package views

import (
	"fmt"
	"sync"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/genform/genform/internal/operation"
	"github.com/genform/genform/internal/words"
)

// The views of pull and push: a bar of files and bytes on a terminal,
// and the closing lines.

// TransferProgress shows the files of a pull or push as they are done: a
// bar on a terminal, nothing otherwise (the closing line says it all).
type TransferProgress struct {
	mu   sync.Mutex
	p    *mpb.Progress
	bar  *mpb.Bar
	last int
}

// NewTransferProgress starts the bar of a transfer of total files, or
// returns a progress that shows nothing when stdout is no terminal.
func NewTransferProgress(env *Streams, verb string, total int) *TransferProgress {
	t := &TransferProgress{}
	if total == 0 || env.Automation() || !drawable(env.Stdout) {
		return t
	}
	t.p = mpb.New(mpb.WithOutput(env.Stdout), mpb.WithWidth(80), mpb.WithRefreshRate(150*time.Millisecond))
	t.bar = t.p.AddBar(int64(total),
		mpb.PrependDecorators(decor.Name(verb, decor.WCSyncSpaceR), decor.CountersNoUnit("%d/%d files", decor.WCSyncSpaceR)),
		mpb.AppendDecorators(decor.Percentage(decor.WCSyncSpace), decor.Elapsed(decor.ET_STYLE_GO, decor.WCSyncSpace)),
	)
	return t
}

// Update is operation.TransferOptions.Progress.
func (t *TransferProgress) Update(done, total int, bytes int64) {
	if t.bar == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if done > t.last {
		t.bar.IncrBy(done - t.last)
		t.last = done
	}
}

// Close ends the bar.
func (t *TransferProgress) Close() {
	if t.p == nil {
		return
	}
	t.bar.Abort(false)
	t.p.Wait()
}

// Transfer writes the closing lines of a pull or push: what moved, then
// each file that did not, with what to do, on stderr.
func Transfer(env *Streams, pull bool, res *operation.Transfer, elapsed time.Duration) {
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
