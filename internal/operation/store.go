package operation

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/atomicfile"
	"github.com/genform/genform/internal/blobstore"
	"github.com/genform/genform/internal/operation/outcome"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// This file holds the object store's operations: opening it for an apply
// (checked before anything is paid for), pull (fetch the declared files
// from it) and push (upload what it lacks).

// storeCheckTimeout bounds the check of the store before an apply.
const storeCheckTimeout = 30 * time.Second

// Blobs is the client of the configured object store; nil, nil when the
// configuration sets none.
func (w *Workspace) Blobs() (*blobstore.Bucket, error) {
	st := w.Config.Settings.Store
	if st == nil {
		return nil, nil
	}
	return blobstore.Open(blobstore.Options{Bucket: st.Bucket, Prefix: st.Prefix, Endpoint: st.Endpoint, Region: st.Region, PathStyle: st.PathStyle,
		MaxSize: w.largestDownload()})
}

// largestDownload is the largest file a fetch from the store reads when
// the state records no size for it (a state older than sizes): the
// largest max_download_size configured for the service or a provider,
// or 0 for the default. Where a size is recorded, that size bounds it.
func (w *Workspace) largestDownload() int64 {
	most := w.Config.Service.MaxDownloadSize
	for _, p := range w.Config.Providers {
		most = max(most, p.Settings.MaxDownloadSize)
	}
	return most
}

// checkedBlobs opens the store and asks it whether the bucket answers to
// the credentials, so that a store out of reach or refusing them stops a
// command before it does anything.
func (w *Workspace) checkedBlobs(ctx context.Context) (*blobstore.Bucket, error) {
	b, err := w.Blobs()
	if err != nil || b == nil {
		return b, err
	}
	ctx, cancel := context.WithTimeout(ctx, storeCheckTimeout)
	defer cancel()
	if err := b.Check(ctx); err != nil {
		return nil, fmt.Errorf("the object store %s: %w", w.Config.Settings.Store.Where(), err)
	}
	return b, nil
}

// usesStore reports whether carrying out plan puts files in place, which
// the store then receives, or fetches files it may hold. A job an
// interrupted apply left that a change leaves undeclared (a delete or a
// destroy among them) is followed, and its files kept and uploaded too.
func usesStore(plan *plans.Plan) bool {
	for _, c := range plan.Changes {
		if c.Reason.KeptJob() != "" {
			return true
		}
		switch c.Action {
		case plans.Create, plans.Replace, plans.Resume, plans.Restore:
			return true
		case plans.Update:
			if !c.MovesOnly() {
				return true
			}
		}
	}
	return false
}

// TransferOptions say which files pull or push moves, and how.
type TransferOptions struct {
	// Addrs limits the transfer to these instances (an address without a
	// key names every instance of its resource); empty means all.
	Addrs []addrs.Instance
	// Parallelism is how many files move at once; 0 means 8.
	Parallelism int
	// LockTimeout is how long push waits for the state's lock.
	LockTimeout time.Duration
	// Progress is called once at the start, then as bytes move and as
	// files are done: files done of total, and bytes done of totalBytes
	// (a file in place already, or that failed, counts as done whole). It
	// may be called from several goroutines, never at once.
	Progress func(done, total int, bytes, totalBytes int64)
}

// transferItem is one file to move.
type transferItem struct {
	rec *statefile.Resource
	out *statefile.Output
	// cached is, for a generation of the history, where the local cache
	// holds its bytes; "" for a recorded instance's file.
	cached string
}

// selectOutputs lists the recorded outputs of the declared instances (or
// of those addrs names) that have a recorded hash.
func (w *Workspace) selectOutputs(snap *statefile.Snapshot, names []addrs.Instance) ([]transferItem, error) {
	named := map[addrs.Instance]bool{}
	for _, a := range names {
		named[a] = true
	}
	used := map[addrs.Instance]bool{}
	var items []transferItem
	for _, addr := range addrs.SortedKeys(snap.Resources) {
		if len(named) > 0 {
			switch {
			case named[addr]:
				used[addr] = true
			case named[addr.Resource.Instance(addrs.NoKey)]:
				used[addr.Resource.Instance(addrs.NoKey)] = true
			default:
				continue
			}
		} else if w.Config.Resource(addr.Resource) == nil {
			// A record whose block is gone is deleted by the next apply.
			continue
		}
		rec := snap.Resources[addr]
		if rec.Status != plans.StatusSucceed {
			continue
		}
		for i := range rec.Outputs {
			if rec.Outputs[i].SHA256 != "" && rec.Outputs[i].Path != "" {
				items = append(items, transferItem{rec: rec, out: &rec.Outputs[i]})
			}
		}
	}
	for _, a := range names {
		if !used[a] {
			return nil, fmt.Errorf("the state records no instance %s; genform state list shows those it does", a)
		}
	}
	return items, nil
}

// transfer runs move on every item, opts.Parallelism at a time, and
// gathers what happened. move reports whether it moved the file (false:
// it was in place already) and its size; it may call progress with the
// bytes it moves as it moves them. object names the store's object of a
// file's sha256, for a file that failed.
func transfer(ctx context.Context, items []transferItem, opts TransferOptions, object func(sha string) string, move func(ctx context.Context, it transferItem, progress func(int64)) (bool, int64, error)) *outcome.Transfer {
	res := &outcome.Transfer{}
	n := opts.Parallelism
	if n <= 0 {
		n = 8
	}
	var totalBytes int64
	for _, it := range items {
		totalBytes += it.out.Size
	}
	var mu sync.Mutex // res, done and the progress
	done, bytesDone := 0, int64(0)
	report := func(files int, n int64) {
		mu.Lock()
		defer mu.Unlock()
		done, bytesDone = done+files, bytesDone+n
		if opts.Progress != nil {
			opts.Progress(done, len(items), bytesDone, totalBytes)
		}
	}
	report(0, 0)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(n)
	for _, it := range items {
		g.Go(func() error {
			if gctx.Err() != nil {
				return nil
			}
			var sent int64 // moved calls it from this goroutine
			moved, size, err := move(gctx, it, func(n int64) { sent += n; report(0, n) })
			mu.Lock()
			switch {
			case err != nil:
				f := outcome.TransferFailure{Addr: it.rec.Addr, Path: it.out.Path, Object: object(it.out.SHA256), Err: err}
				if it.cached != "" {
					f.Generation = it.rec.GenerationID
				}
				res.Failed = append(res.Failed, f)
			case moved:
				res.Moved++
				res.Bytes += size
			default:
				res.Present++
			}
			mu.Unlock()
			report(1, max(it.out.Size-sent, 0))
			return nil
		})
	}
	_ = g.Wait() // move's errors are gathered, not returned
	if ctx.Err() != nil {
		res.Failed = append(res.Failed, outcome.TransferFailure{Err: fmt.Errorf("interrupted after %d of %d files: %w", done, len(items), ctx.Err())})
	}
	// In address order, then by path.
	slices.SortStableFunc(res.Failed, func(a, b outcome.TransferFailure) int {
		return cmp.Or(a.Addr.Compare(b.Addr), strings.Compare(a.Path, b.Path))
	})
	return res
}

// Pull fetches the files of the declared instances (or of those opts
// names) that are missing or changed on disk from the object store, each
// checked against its recorded sha256 before it is put in place, so a
// wrong file never lands under its name. It reads the state without
// writing it: a fetched file is given its recorded modification time,
// which tells the next plan it is the recorded one without hashing it.
func (w *Workspace) Pull(ctx context.Context, opts TransferOptions) (*outcome.Transfer, error) {
	if w.Config.Settings.Store == nil {
		return nil, errors.New("no object store is configured: add a store \"s3\" block to the genform block, or set GENFORM_STORE_BUCKET (see docs/object-store.md)")
	}
	snap, err := w.Snapshot("pull", opts.LockTimeout)
	if err != nil {
		return nil, err
	}
	if snap == nil {
		return &outcome.Transfer{}, nil
	}
	items, err := w.selectOutputs(snap, opts.Addrs)
	if err != nil {
		return nil, err
	}
	b, err := w.checkedBlobs(ctx)
	if err != nil {
		return nil, err
	}
	var g atomicfile.Group
	res := transfer(ctx, items, opts, b.Object, func(ctx context.Context, it transferItem, progress func(int64)) (bool, int64, error) {
		o := it.out
		if workdir.CheckFile(".", *o) == workdir.FileOK {
			return false, 0, nil
		}
		// The directory the file goes in, which a record may name apart
		// from its dir.
		if err := workdir.CheckInside(".", filepath.Dir(filepath.FromSlash(o.Path))); err != nil {
			return false, 0, err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.FromSlash(o.Path)), 0o755); err != nil {
			return false, 0, err
		}
		size, err := b.GetProgress(ctx, o.SHA256, o.Size, filepath.FromSlash(o.Path), progress, atomicfile.InGroup(&g))
		if err != nil {
			return false, 0, pullError(err, o)
		}
		if !o.ModTime.IsZero() {
			// Best effort: without it the next plan hashes the file once.
			_ = os.Chtimes(filepath.FromSlash(o.Path), o.ModTime, o.ModTime)
		}
		return true, size, nil
	})
	return res, nil
}

// pullError says what to do about a file pull could not fetch.
func pullError(err error, o *statefile.Output) error {
	if errors.Is(err, blobstore.ErrNotStored) {
		return fmt.Errorf("%w: push it from a working copy that has the file (genform push), or let genform apply download it from the provider", err)
	}
	if ce, ok := errors.AsType[*blobstore.CorruptError](err); ok {
		return fmt.Errorf("%w; remove that object from the store, then push the file from a working copy that has it, or let genform apply download it from the provider", ce)
	}
	if se, ok := errors.AsType[*blobstore.SizeError](err); ok && se.Want > 0 {
		return fmt.Errorf("%w; remove that object from the store, then push the file from a working copy that has it, or let genform apply download it from the provider", se)
	}
	return err
}

// Push uploads the files of the recorded instances (or of those opts
// names) that the object store lacks, and records that it holds them: a
// state made before a store was configured, or files whose upload an
// apply could not finish. A file missing or changed on disk is not
// uploaded (its bytes are not the recorded ones); pull or apply brings it
// back first.
func (w *Workspace) Push(ctx context.Context, opts TransferOptions) (*outcome.Transfer, error) {
	if w.Config.Settings.Store == nil {
		return nil, errors.New("no object store is configured: add a store \"s3\" block to the genform block, or set GENFORM_STORE_BUCKET (see docs/object-store.md)")
	}
	b, err := w.checkedBlobs(ctx)
	if err != nil {
		return nil, err
	}
	st, err := w.OpenState("push", opts.LockTimeout, false)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return &outcome.Transfer{}, nil
	}
	defer st.Close()
	snap, err := st.Snapshot()
	if err != nil {
		return nil, err
	}
	items, err := w.selectOutputs(snap, opts.Addrs)
	if err != nil {
		return nil, err
	}
	kept, err := w.historyOutputs(st, snap, opts.Addrs)
	if err != nil {
		return nil, err
	}
	items = append(items, kept...)
	changed := map[*statefile.Resource]bool{}
	var mu sync.Mutex
	res := transfer(ctx, items, opts, b.Object, func(ctx context.Context, it transferItem, _ func(int64)) (bool, int64, error) {
		o, path := it.out, it.cached
		uploaded := false
		if path == "" {
			path = filepath.FromSlash(o.Path)
			if check := workdir.CheckFile(".", *o); check != workdir.FileOK {
				// Another copy may have uploaded what this one lacks on
				// disk: then there is nothing to push.
				has, err := b.Has(ctx, o.SHA256)
				switch {
				case err != nil:
					return false, 0, err
				case !has && check == workdir.FileMissing:
					return false, 0, errors.New("it is missing on disk, and the store does not hold it: genform apply downloads it again")
				case !has:
					return false, 0, errors.New("it was changed on disk and is not the recorded file, which the store does not hold: genform apply downloads the recorded one again")
				}
				path = ""
			}
		}
		if path != "" {
			var err error
			if uploaded, err = b.Put(ctx, o.SHA256, path, o.ContentType); err != nil {
				return false, 0, err
			}
		}
		mu.Lock()
		if !o.Stored {
			o.Stored = true
			changed[it.rec] = it.cached != ""
		}
		mu.Unlock()
		return uploaded, o.Size, nil
	})
	if len(changed) > 0 {
		recs := slices.SortedFunc(maps.Keys(changed), func(a, b *statefile.Resource) int {
			return cmp.Or(a.Addr.Compare(b.Addr), strings.Compare(a.GenerationID, b.GenerationID))
		})
		err := st.Update(func(tx *statefile.Tx) error {
			for _, rec := range recs {
				record := tx.Record
				if changed[rec] {
					record = tx.RecordHistory
				}
				if err := record(rec); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("the files are in the store, but recording that failed: %w; push again to record it", err)
		}
	}
	return res, nil
}

// historyOutputs lists the files of the history's generations (of the
// instances names names, or all) that the store lacks and the local cache
// holds: generations made before the store was configured, or followed
// after an interrupted apply, which a teammate restores only from the
// store once the provider's links have expired. A file the cache no
// longer holds is not listed: only a working copy that has it can push
// it.
func (w *Workspace) historyOutputs(st *statefile.Store, snap *statefile.Snapshot, names []addrs.Instance) ([]transferItem, error) {
	entries, err := st.History(addrs.Instance{})
	if err != nil {
		return nil, err
	}
	// A record's own generation is in the history too; recording the
	// record files it there again, stored or not.
	type gen struct{ fp, id string }
	current := map[gen]bool{}
	for _, rec := range snap.Resources {
		current[gen{rec.Fingerprint, rec.GenerationID}] = true
	}
	c := workdir.CacheOf(w.Config, ".")
	var items []transferItem
	for _, e := range entries {
		if e.Status != plans.StatusSucceed || current[gen{e.Fingerprint, e.GenerationID}] ||
			len(names) > 0 && !slices.ContainsFunc(names, func(a addrs.Instance) bool {
				return a == e.Addr || a == e.Addr.Resource.Instance(addrs.NoKey)
			}) {
			continue
		}
		for i := range e.Outputs {
			o := &e.Outputs[i]
			if o.Stored || o.SHA256 == "" || o.Path == "" {
				continue
			}
			if path, ok := c.Path(o.SHA256); ok {
				items = append(items, transferItem{rec: e, out: o, cached: path})
			}
		}
	}
	return items, nil
}
