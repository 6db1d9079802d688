package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/statefile"
)

// This file holds fetching a generation's files into its directory:
// every output (or those an update asks for), from the media URL or the
// watermark-free one, each checked to stay inside the working directory.

// downloadAll fetches the outputs of rec (only those in which, when not
// nil) into rec.Dir, filling in path, size, mtime and hash. An output that
// could not be fetched keeps what its record says (a new generation's has
// no hash yet, so the next plan downloads it; one fetched again keeps the
// hash and store mark it had, which the next attempt is checked against,
// and its file is still missing or changed, so the next plan fetches it
// again): a failed download changes nothing that was recorded.
//
// res is the job's result just fetched, nil when the files are fetched
// again later: an output it holds inline (bytes, no URL) is written from
// it. A link that expired (the provider's URLs live a day or two) and an
// output with no URL send for the job's result again, once, for fresh
// links.
//
// A file that cannot be written here (a full disk, a read-only file
// system) stops the downloads of rec: the next would fail alike.
func (r *applyRun) downloadAll(ctx context.Context, rec *statefile.Resource, which map[int]bool, res *provider.Result) error {
	p, err := r.providerFor(rec.Endpoint)
	if err != nil {
		return fmt.Errorf("downloading the outputs of %s: %w", rec.Addr, err)
	}
	src := &outputSource{p: p, rec: rec, res: res}
	var errs []error
	var wmURL string
	stopped := false
	for i := range rec.Outputs {
		o := &rec.Outputs[i]
		if which != nil && !which[o.Index] {
			continue
		}
		if stopped {
			continue
		}
		var d *fetched
		var err error
		if rec.Addr.Resource.Kind == addrs.Video && rec.WatermarkFree {
			if wmURL == "" {
				wmURL, err = watermarkFreeURL(ctx, p, rec.CreationID)
				if err != nil {
					errs = append(errs, fmt.Errorf("getting the watermark-free URL of %s: %w", rec.Addr, r.timedOut(ctx, err)))
					continue
				}
			}
			d, err = r.download(ctx, p, rec.Addr, wmURL, rec.Dir, o.Index)
		} else {
			d, err = r.fetchOutput(ctx, src, o)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("downloading output %d of %s: %w", o.Index, rec.Addr, r.timedOut(ctx, err)))
			var le *provider.LocalError
			stopped = errors.As(err, &le) || ctx.Err() != nil
			continue
		}
		o.Path = d.path
		o.Size = d.size
		o.ModTime = d.mtime
		// The store holds what it was given: other bytes are not in it.
		o.Stored = o.Stored && o.SHA256 == d.sha
		o.SHA256 = d.sha
		o.ContentType = d.contentType
	}
	return errors.Join(errs...)
}

// outputSource is where a generation's files come from: the result at
// hand, and the provider to ask for it again.
type outputSource struct {
	p   provider.Provider
	rec *statefile.Resource
	// res is the result at hand; refetched is set once it was fetched
	// again for fresh links, which is done once per downloadAll.
	res       *provider.Result
	refetched bool
}

// output is output index of the result at hand, if it has one.
func (s *outputSource) output(index int) (provider.Output, bool) {
	if s.res == nil {
		return provider.Output{}, false
	}
	for _, o := range s.res.Outputs {
		if o.Index == index {
			return o, true
		}
	}
	return provider.Output{}, false
}

// refetch fetches the job's result again, once.
func (s *outputSource) refetch(ctx context.Context) error {
	if s.refetched {
		return errors.New("the job's result was fetched again already")
	}
	s.refetched = true
	job := provider.Job{ID: s.rec.GenerationID, Kind: s.rec.Addr.Resource.Kind, Target: s.rec.Endpoint.Target(), Handle: json.RawMessage(s.rec.Handle)}
	res, err := s.p.Result(ctx, job)
	if err != nil {
		return fmt.Errorf("fetching job %s again for fresh links: %w", s.rec.GenerationID, err)
	}
	s.res = res
	return nil
}

// fetchOutput fetches output o of src into its directory: from the bytes
// the result holds, or from its link; a link that expired, or an output
// the record has no link for, is taken from the result fetched again.
func (r *applyRun) fetchOutput(ctx context.Context, src *outputSource, o *statefile.Output) (*fetched, error) {
	if o.MediaURL == "" {
		if _, held := src.output(o.Index); !held {
			if err := src.refetch(ctx); err != nil {
				return nil, fmt.Errorf("the record holds no link to it, and %w", err)
			}
		}
	}
	if out, ok := src.output(o.Index); ok {
		if out.Data != nil {
			return r.writeInline(src.rec.Dir, o.Index, out)
		}
		if out.URL != "" {
			o.MediaURL = out.URL
		}
	}
	if o.MediaURL == "" {
		return nil, errors.New("the provider gives no link to it and no longer holds its bytes; restore it from history (genform history) or generate it again (genform apply -replace)")
	}
	d, err := r.download(ctx, src.p, src.rec.Addr, o.MediaURL, src.rec.Dir, o.Index)
	if err == nil || !provider.IsExpiredLink(err) || src.refetched {
		return d, err
	}
	if ferr := src.refetch(ctx); ferr != nil {
		return nil, fmt.Errorf("%w; %w", err, ferr)
	}
	out, ok := src.output(o.Index)
	if !ok || (out.URL == o.MediaURL && out.Data == nil) {
		return nil, fmt.Errorf("%w; the provider gave no fresh link", err)
	}
	if out.Data != nil {
		return r.writeInline(src.rec.Dir, o.Index, out)
	}
	o.MediaURL = out.URL
	return r.download(ctx, src.p, src.rec.Addr, o.MediaURL, src.rec.Dir, o.Index)
}

// writeInline writes an output the provider answered with as bytes into
// dir as <index>.<ext>.
func (r *applyRun) writeInline(dir string, index int, out provider.Output) (*fetched, error) {
	return r.place(dir, index, func(abs, base string) (*provider.Downloaded, error) {
		// The bytes are in memory already, bounded by the answer the
		// adapter read: the default cap is enough here.
		return provider.WriteMedia(abs, base, out.Data, out.MediaType, 0)
	})
}

type fetched struct {
	path, sha, contentType string
	size                   int64
	mtime                  time.Time
}

// download fetches one file into dir as <index>.<ext>. The client retries
// what is worth retrying (truncated transfers included).
func (r *applyRun) download(ctx context.Context, p provider.Provider, addr addrs.Instance, url, dir string, index int) (*fetched, error) {
	return r.place(dir, index, func(abs, base string) (*provider.Downloaded, error) {
		return p.Download(ctx, url, abs, base)
	})
}

// place has write put output index into dir, a directory of the working
// directory (checked to stay inside it), and describes the file written.
func (r *applyRun) place(dir string, index int, write func(abs, base string) (*provider.Downloaded, error)) (*fetched, error) {
	if err := workdir.CheckInside(r.e.Dir, dir); err != nil {
		return nil, err
	}
	d, err := write(filepath.Join(r.e.Dir, filepath.FromSlash(dir)), strconv.Itoa(index))
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(d.Path)
	if err != nil {
		return nil, err
	}
	rel := filepath.ToSlash(filepath.Join(dir, filepath.Base(d.Path)))
	return &fetched{path: rel, sha: d.SHA256, contentType: d.ContentType, size: d.Size, mtime: fi.ModTime()}, nil
}

// watermarkFreeURL mints the link of a video's watermark-free file, on a
// provider that has them.
func watermarkFreeURL(ctx context.Context, p provider.Provider, creationID string) (string, error) {
	wf, ok := p.(provider.WatermarkFreer)
	if !ok {
		return "", errors.New("this provider has no watermark-free files")
	}
	return wf.WatermarkFreeURL(ctx, creationID)
}
