package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/service"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/statefile"
)

// This file holds fetching a generation's files into its directory:
// every output (or those an update asks for), from the media URL or the
// watermark-free one, each checked to stay inside the working directory.

// downloadAll fetches the outputs of rec (only those in which, when not
// nil) into rec.Dir, filling in path, size, mtime and hash. An output that
// could not be fetched keeps an empty hash, so the next plan re-downloads it.
//
// A file that cannot be written here (a full disk, a read-only file
// system) stops the downloads of rec: the next would fail alike.
func (r *applyRun) downloadAll(ctx context.Context, rec *statefile.Resource, which map[int]bool) error {
	p, err := r.providerFor(rec.Endpoint)
	if err != nil {
		return fmt.Errorf("downloading the outputs of %s: %w", rec.Addr, err)
	}
	var errs []error
	var wmURL string
	stopped := false
	for i := range rec.Outputs {
		o := &rec.Outputs[i]
		if which != nil && !which[o.Index] {
			continue
		}
		if stopped {
			o.SHA256 = ""
			continue
		}
		url := o.MediaURL
		if rec.Addr.Resource.Kind == addrs.Video && rec.WatermarkFree {
			if wmURL == "" {
				w, err := watermarkFreeURL(ctx, p, rec.CreationID)
				if err != nil {
					errs = append(errs, fmt.Errorf("getting the watermark-free URL of %s: %w", rec.Addr, r.timedOut(ctx, err)))
					o.SHA256 = ""
					continue
				}
				wmURL = w
			}
			url = wmURL
		}
		d, err := r.download(ctx, p, rec.Addr, url, rec.Dir, o.Index)
		if err != nil {
			o.SHA256 = ""
			errs = append(errs, fmt.Errorf("downloading output %d of %s: %w", o.Index, rec.Addr, r.timedOut(ctx, err)))
			var le *service.LocalError
			stopped = errors.As(err, &le) || ctx.Err() != nil
			continue
		}
		o.Path = d.path
		o.Size = d.size
		o.ModTime = d.mtime
		o.SHA256 = d.sha
		o.ContentType = d.contentType
	}
	return errors.Join(errs...)
}

type fetched struct {
	path, sha, contentType string
	size                   int64
	mtime                  time.Time
}

// download fetches one file into dir as <index>.<ext>. The client retries
// what is worth retrying (truncated transfers included).
func (r *applyRun) download(ctx context.Context, p provider.Provider, addr addrs.Instance, url, dir string, index int) (*fetched, error) {
	e := r.e
	if err := workdir.CheckInside(e.Dir, dir); err != nil {
		return nil, err
	}
	abs := filepath.Join(e.Dir, filepath.FromSlash(dir))
	d, err := p.Download(ctx, url, abs, strconv.Itoa(index))
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
