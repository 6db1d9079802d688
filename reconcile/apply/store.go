package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sync/atomic"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/blobstore"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/statefile"
)

// This file holds the object store's part in an apply: every file an
// apply downloads, restores or finds unstored is uploaded once its
// instance is recorded, and a file an instance lacks is fetched from the
// store before anything is asked of a provider.

// Unstored is a file the object store should hold and does not: its
// upload failed. The file and its record are kept; the next apply
// uploads it.
type Unstored struct {
	Addr addrs.Instance
	Path string
	// Generation is, for a file of a generation filed in the history (a
	// job an interrupted apply left), its id: push uploads it, from the
	// local cache. "" for a recorded instance's file.
	Generation string
	Object     string // s3://bucket/key
	Err        error
}

// storeState is the run's view of the store: once it could not be
// reached, the rest of the run does not try it again (each try would wait
// out its retries), and reports the files it did not upload.
type storeState struct {
	down atomic.Pointer[error]
}

// upload puts the files of rec that the store lacks into it, and records
// that it holds them. rec was just recorded: a failed upload loses
// nothing, it is listed in the result (Unstored) and the next apply,
// seeing the record's files unstored, uploads them.
func (r *applyRun) upload(addr addrs.Instance, rec *statefile.Resource) {
	if r.e.Blobs == nil || rec == nil {
		return
	}
	changed := false
	for i := range rec.Outputs {
		o := &rec.Outputs[i]
		if o.Stored || o.SHA256 == "" || o.Path == "" {
			continue
		}
		if err := workdir.CheckInside(r.e.Dir, filepath.Dir(filepath.FromSlash(o.Path))); err != nil {
			r.unstored(addr, "", o, err)
			continue
		}
		if r.put(addr, "", o, filepath.Join(r.e.Dir, filepath.FromSlash(o.Path))) {
			o.Stored, changed = true, true
		}
	}
	if !changed {
		return
	}
	if err := r.commit(func(tx *statefile.Tx) error { return tx.Record(rec) }); err != nil {
		// The bytes are in the store; the record says they are not, and
		// the next apply finds them there without uploading them again.
		r.emit(Event{Addr: addr, Phase: PhaseWarning, Err: fmt.Errorf("recording that the store holds the files of %s: %w", addr, err)})
	}
}

// put uploads the file at path, the bytes of o (of generation gen in the
// history, or of addr's record when gen is ""), unless the store holds
// them or the run found it down; it reports whether the store holds them,
// and lists the file in the result (Unstored) when it does not.
func (r *applyRun) put(addr addrs.Instance, gen string, o *statefile.Output, path string) bool {
	if down := r.store.down.Load(); down != nil {
		r.unstored(addr, gen, o, *down)
		return false
	}
	if _, err := r.e.Blobs.Put(r.ctx, o.SHA256, path, o.ContentType); err != nil {
		if errors.Is(err, blobstore.ErrUnreachable) || errors.Is(err, blobstore.ErrCredentials) {
			r.store.down.CompareAndSwap(nil, &err)
		}
		r.unstored(addr, gen, o, err)
		return false
	}
	return true
}

// unstored notes a file the store did not take.
func (r *applyRun) unstored(addr addrs.Instance, gen string, o *statefile.Output, err error) {
	if r.ctx.Err() != nil {
		err = fmt.Errorf("the apply was interrupted: %w", r.ctx.Err())
	}
	r.mu.Lock()
	r.res.Unstored = append(r.res.Unstored, Unstored{Addr: addr, Path: o.Path, Generation: gen, Object: r.e.Blobs.Object(o.SHA256), Err: err})
	r.mu.Unlock()
}

// fetchStored fetches the outputs of rec in which (by index) from the
// store, into their recorded paths, each checked against its recorded
// sha256; it removes from which those it fetched. A file the store does
// not hold, or a store that cannot be reached, is left in which for the
// provider, with a warning. An object whose bytes are not its name's, or
// whose size is not the recorded one, is an error naming it: the file is
// not written, and nothing is asked of the provider for it.
func (r *applyRun) fetchStored(ctx context.Context, rec *statefile.Resource, which map[int]bool) error {
	if r.e.Blobs == nil {
		return nil
	}
	var errs []error
	for i := range rec.Outputs {
		o := &rec.Outputs[i]
		if !which[o.Index] || o.Path == "" {
			continue
		}
		// The directory the file goes in, which a record may name apart
		// from its dir. A fresh clone, or a copy whose output folder was
		// removed, has none: it is made here, through the working
		// directory's root (a link leading out is refused, not followed),
		// or the store's bytes would have nowhere to go and the file would
		// be asked of a provider whose link may have expired.
		if err := workdir.CheckInside(r.e.Dir, filepath.Dir(filepath.FromSlash(o.Path))); err != nil {
			return err
		}
		if r.store.down.Load() == nil && o.SHA256 != "" {
			if err := makeDir(r.e.Dir, path.Dir(o.Path)); err != nil {
				return fmt.Errorf("output %d of %s (%s): %w", o.Index, rec.Addr, o.Path, err)
			}
		}
		ok, err := r.getStored(ctx, rec.Addr, o, filepath.Join(r.e.Dir, filepath.FromSlash(o.Path)), "it is downloaded from the provider")
		if err != nil {
			errs = append(errs, fmt.Errorf("output %d of %s (%s): %w; remove that object from the store, and the next apply downloads the file from the provider and uploads it again", o.Index, rec.Addr, o.Path, err))
		}
		if ok || err != nil {
			delete(which, o.Index)
		}
	}
	return errors.Join(errs...)
}

// getStored fetches the bytes of o from the store into dst, reporting
// whether it did. A store that lacks them or cannot be reached is a
// warning saying what is done instead (otherwise); an object whose bytes
// are not its name's, or whose size is not the recorded one, is an error,
// and dst is not written: no more of such an object is read than one byte
// past the recorded size.
func (r *applyRun) getStored(ctx context.Context, addr addrs.Instance, o *statefile.Output, dst, otherwise string) (bool, error) {
	b := r.e.Blobs
	if b == nil || o.SHA256 == "" || r.store.down.Load() != nil {
		return false, nil
	}
	n, err := b.Get(ctx, o.SHA256, o.Size, dst)
	var ce *blobstore.CorruptError
	var se *blobstore.SizeError
	switch {
	case err == nil:
		// A record older than sizes learns its file's, which bounds the
		// next fetch; the file's time is the record's, so the next plan
		// takes it without hashing it.
		if o.Size == 0 {
			o.Size = n
		}
		if fi, err := os.Stat(dst); err == nil {
			o.ModTime = fi.ModTime()
		}
		o.Stored = true
		return true, nil
	case errors.As(err, &ce), errors.As(err, &se):
		// Not what the record says: the provider is not asked for it
		// (its bytes would go under a name whose object is wrong), and
		// the record is left as it is.
		return false, err
	case errors.Is(err, blobstore.ErrNotStored):
		o.Stored = false
		r.emit(Event{Addr: addr, Phase: PhaseWarning, Err: fmt.Errorf("output %d is not in the store (%s): %s", o.Index, b.Object(o.SHA256), otherwise)})
	default:
		if errors.Is(err, blobstore.ErrUnreachable) || errors.Is(err, blobstore.ErrCredentials) {
			r.store.down.CompareAndSwap(nil, &err)
		}
		r.emit(Event{Addr: addr, Phase: PhaseWarning, Err: fmt.Errorf("output %d could not be fetched from the store: %w; %s", o.Index, err, otherwise)})
	}
	return false, nil
}
