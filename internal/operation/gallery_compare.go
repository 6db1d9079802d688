package operation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/backend"
	"github.com/genform/genform/internal/blobstore"
	"github.com/genform/genform/internal/cache"
	"github.com/genform/genform/internal/catalog"
	"github.com/genform/genform/internal/gallery"
	"github.com/genform/genform/internal/thumbnail"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// This file holds genform gallery -base: the selected workspace (a pull
// request's preview) compared with another (the one it merges into), its
// pictures served from the object store. Every output shown is put in
// the store when it is not there yet, from this machine's files or
// cache; every thumbnail is made once, from the output's bytes, and kept
// in the store under its source's sha256, so a second comment finds it
// with a HEAD request and makes nothing.

// CompareOptions say what genform gallery -base compares.
type CompareOptions struct {
	// Base is the workspace compared with: what the selected one
	// changes.
	Base string
	// LockTimeout is how long a state's read waits (statefile.Options).
	LockTimeout time.Duration
	// Parallelism is how many outputs are looked at, uploaded and
	// fetched at once; 0 means 8. Thumbnails are made on at most
	// GOMAXPROCS of them at once.
	Parallelism int
}

// ErrNoLinks is wrapped by the error of a comparison whose configuration
// does not say how to link the pictures: no store, or a store without
// presign or public_url.
var ErrNoLinks = errors.New("the comparison's pictures are served from the object store")

// CompareWorkspaces compares the selected workspace's state with
// opts.Base's: every instance whose outputs (their sha256s) differ, each
// output shown by a thumbnail linked to the file, both in the object
// store, and each new generation priced as the plan prices it.
func (w *Workspace) CompareWorkspaces(ctx context.Context, opts CompareOptions) (*gallery.Comparison, error) {
	if err := backend.CheckWorkspace(opts.Base); err != nil {
		return nil, fmt.Errorf("-base: %w", err)
	}
	if opts.Base == w.Name {
		return nil, fmt.Errorf("-base=%s is the selected workspace, and a workspace does not differ from itself: select the pull request's workspace (GENFORM_WORKSPACE=NAME, or genform workspace select NAME) and name the one it merges into with -base", opts.Base)
	}
	st := w.Config.Settings.Store
	switch {
	case st == nil:
		return nil, fmt.Errorf("%w, and none is configured: add a store \"s3\" block to the genform block with presign = \"168h\" (links that expire) or public_url = \"https://...\" (where the bucket's objects are public); see docs/gallery.md", ErrNoLinks)
	case st.Presign == 0 && st.PublicURL == "":
		return nil, fmt.Errorf("%w, and the store block sets neither presign nor public_url, so they cannot be linked: add presign = \"168h\" (links anyone with the comment can open for 7 days) or public_url = \"https://cdn.example.com/media\" (where the bucket's objects are public to anyone) to the store \"s3\" block; see docs/gallery.md", ErrNoLinks)
	}
	base, err := w.snapshotOf(opts.Base, opts.LockTimeout)
	if err != nil {
		return nil, err
	}
	if base == nil {
		if opts.Base == backend.DefaultWorkspace {
			return nil, errors.New("workspace default has no state yet: apply the branch the pull request merges into first, or name another workspace with -base (genform workspace list shows them)")
		}
		return nil, fmt.Errorf("workspace %q does not exist: genform workspace list shows those that do", opts.Base)
	}
	selected, err := w.snapshotOf(w.Name, opts.LockTimeout)
	if err != nil {
		return nil, err
	}
	if selected == nil {
		return nil, fmt.Errorf("the selected workspace, %s, has no state: run genform apply in it first (%s)", w.Name, w.StateWhere())
	}
	cmp := gallery.Compare(opts.Base, w.Name, base, selected, w.Hider())
	cmp.Presign, cmp.Public = st.Presign, st.PublicURL
	for _, d := range cmp.Differences {
		if d.After != nil {
			d.Cost = w.priceOf(d.After.Record)
		}
	}
	if len(cmp.Differences) == 0 {
		return cmp, nil
	}
	b, err := w.checkedBlobs(ctx)
	if err != nil {
		return nil, err
	}
	l := &linker{w: w, b: b, store: st, cache: workdir.CacheOf(w.Config, "."), ffmpeg: thumbnail.FindFFmpeg(),
		cpu: make(chan struct{}, runtime.GOMAXPROCS(0))}
	if err := l.link(ctx, cmp, opts.Parallelism); err != nil {
		return nil, err
	}
	return cmp, nil
}

// snapshotOf reads workspace ws's state as last committed; nil when it
// has none.
func (w *Workspace) snapshotOf(ws string, lockTimeout time.Duration) (*statefile.Snapshot, error) {
	st, err := backend.ReadState(w.Config, ws, "gallery", lockTimeout)
	if err != nil || st == nil {
		return nil, err
	}
	defer st.Close()
	return st.Snapshot()
}

// priceOf is what generation rec costs at the configured prices, as the
// plan prices a generation (plans.Change.Cost): its kind's price times
// its files (and a video's seconds); "unpriced" when none is set.
func (w *Workspace) priceOf(rec *statefile.Resource) string {
	prices := w.Config.PricesFor(rec.Endpoint)
	c := &plans.Change{Addr: rec.Addr, Action: plans.Create, Media: max(len(rec.Outputs), 1)}
	if rec.Addr.Resource.Kind == addrs.Video {
		c.Seconds = recordedSeconds(rec)
		if c.Seconds == 0 {
			return "unpriced"
		}
	}
	amount, ok := c.Cost(prices)
	if prices == nil || !ok {
		return "unpriced"
	}
	return amount.String() + " " + prices.Currency
}

// recordedSeconds is the length of the video rec's request asked for:
// its duration, or its model's default; 0 when neither is known.
func recordedSeconds(rec *statefile.Resource) int {
	if attrs, err := config.FlattenRequest(rec.Endpoint, rec.Request); err == nil {
		if n, err := strconv.ParseFloat(fmt.Sprint(attrs["duration"]), 64); err == nil && n > 0 {
			return int(n)
		}
	}
	if p := catalog.Lookup(rec.Endpoint.Provider()); p != nil {
		return int(p.Caps(rec.Endpoint.Target()).DefaultDuration)
	}
	return 0
}

// linker puts a comparison's pictures in the store and links them.
type linker struct {
	w      *Workspace
	b      *blobstore.Bucket
	store  *config.ObjectStore
	cache  *cache.Cache
	ffmpeg string
	// cpu bounds the thumbnails made at once to the cores.
	cpu chan struct{}

	mu       sync.Mutex
	problems []string
}

// source is one file to show: the bytes of sha256 sha, recorded as out,
// and every picture of the comparison that shows them.
type source struct {
	sha    string
	out    statefile.Output
	onDisk bool // the working copy's file at out.Path is the recorded one
	pics   []*gallery.Picture
	addr   string
}

// link gathers the comparison's files, one per sha256, and puts each in
// the store, makes its thumbnail when the store lacks it, and links
// both, parallelism at a time. A store out of reach or refusing the
// credentials stops it; a file that cannot be shown is said in its
// picture and in cmp.Problems.
func (l *linker) link(ctx context.Context, cmp *gallery.Comparison, parallelism int) error {
	bySHA := map[string]*source{}
	var order []*source
	for _, d := range cmp.Differences {
		for _, side := range []*gallery.Side{d.Before, d.After} {
			if side == nil {
				continue
			}
			for i, p := range side.Pictures {
				if p.SHA256 == "" {
					p.Problem = "no sha256 recorded: the file cannot be named in the store"
					continue
				}
				s := bySHA[p.SHA256]
				if s == nil {
					s = &source{sha: p.SHA256, out: side.Record.Outputs[i], addr: d.Addr}
					bySHA[p.SHA256] = s
					order = append(order, s)
				}
				s.pics = append(s.pics, p)
			}
		}
	}
	// The working copy holds the selected workspace's files: a file on
	// disk as recorded is read there rather than fetched.
	for _, s := range order {
		s.onDisk = workdir.CheckFile(".", s.out) == workdir.FileOK
	}
	if parallelism <= 0 {
		parallelism = 8
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallelism)
	for _, s := range order {
		g.Go(func() error { return l.one(gctx, s) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	sort.Strings(l.problems)
	cmp.Problems = l.problems
	return nil
}

// storeDown reports whether err says the store cannot be used at all,
// which stops the comparison rather than one picture.
func storeDown(err error) bool {
	return errors.Is(err, blobstore.ErrUnreachable) || errors.Is(err, blobstore.ErrCredentials) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// one puts s's file in the store if it lacks it, makes its thumbnail if
// the store lacks that, and links both.
func (l *linker) one(ctx context.Context, s *source) error {
	problem := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		l.mu.Lock()
		l.problems = append(l.problems, fmt.Sprintf("%s output %d (sha256 %s): %s", s.addr, s.out.Index, s.sha[:min(12, len(s.sha))], msg))
		l.mu.Unlock()
		for _, p := range s.pics {
			p.Problem = msg
		}
	}
	stored, err := l.b.HasKey(ctx, l.b.Key(s.sha))
	if err != nil {
		return err
	}
	if !stored {
		path, ok := l.localFile(s)
		if !ok {
			problem("not in the object store, and not on this machine: push it from a working copy that has it (genform push), then write the comment again")
			return nil
		}
		if _, err := l.b.Put(ctx, s.sha, path, s.out.ContentType); err != nil {
			if storeDown(err) {
				return err
			}
			problem("not in the object store, and uploading it failed: %v", err)
			return nil
		}
	}
	full, err := l.linkTo(ctx, l.b.Key(s.sha))
	if err != nil {
		return err
	}
	thumbKey := l.b.ThumbnailKey(s.sha)
	has, err := l.b.HasKey(ctx, thumbKey)
	if err != nil {
		return err
	}
	var why string
	if !has {
		why, err = l.makeThumbnail(ctx, s, thumbKey)
		if err != nil {
			return err
		}
	}
	var thumb string
	if why == "" {
		if thumb, err = l.linkTo(ctx, thumbKey); err != nil {
			return err
		}
	} else {
		problem("%s", why)
	}
	for _, p := range s.pics {
		p.Full, p.Thumb = full, thumb
	}
	return nil
}

// linkTo is the link a browser opens the object at key by: presigned for
// the store block's presign, or under its public_url.
func (l *linker) linkTo(ctx context.Context, key string) (string, error) {
	if l.store.PublicURL != "" {
		return blobstore.PublicURL(l.store.PublicURL, key), nil
	}
	return l.b.Presign(ctx, key, l.store.Presign)
}

// localFile is where this machine has s's bytes: the working copy's file
// as recorded (by its size and time: a reader checks the bytes), or the
// local cache's copy.
func (l *linker) localFile(s *source) (string, bool) {
	if s.onDisk {
		return filepath.FromSlash(s.out.Path), true
	}
	return l.cache.Path(s.sha)
}

// makeThumbnail makes s's thumbnail and uploads it at key. why says why
// none was made (a video without ffmpeg, bytes that are no picture);
// err is a store that cannot be used.
func (l *linker) makeThumbnail(ctx context.Context, s *source, key string) (why string, err error) {
	ct := s.pics[0].ContentType
	var th *thumbnail.Thumbnail
	if strings.HasPrefix(ct, "video/") {
		if l.ffmpeg == "" {
			return "no still frame: ffmpeg is not installed where this comment was written (install it, e.g. apt-get install ffmpeg); the video is linked", nil
		}
		path, ok := l.localFile(s)
		if ok {
			// The working copy's file may be another workspace's of the
			// same size and time: ffmpeg reads only what holds the bytes.
			if sum, err := cache.HashFile(path); err != nil || sum != s.sha {
				ok = false
			}
		}
		if !ok {
			tmp, err := os.MkdirTemp("", "genform-frame-*")
			if err != nil {
				return "", err
			}
			defer os.RemoveAll(tmp)
			path = filepath.Join(tmp, "video")
			if _, err := l.b.Get(ctx, s.sha, s.out.Size, path); err != nil {
				if storeDown(err) {
					return "", err
				}
				return fmt.Sprintf("no still frame: fetching the video failed: %v", err), nil
			}
		}
		l.cpu <- struct{}{}
		th, err = thumbnail.Video(ctx, l.ffmpeg, path)
		<-l.cpu
		if err != nil {
			return fmt.Sprintf("no still frame: %v", err), nil
		}
	} else {
		data, err := l.bytesOf(ctx, s)
		if err != nil {
			if storeDown(err) {
				return "", err
			}
			return fmt.Sprintf("no thumbnail: %v", err), nil
		}
		l.cpu <- struct{}{}
		th, err = thumbnail.Image(data)
		<-l.cpu
		if err != nil {
			return fmt.Sprintf("no thumbnail: %v", err), nil
		}
	}
	if err := l.b.PutBytes(ctx, key, th.PNG, thumbnail.ContentType); err != nil {
		if storeDown(err) {
			return "", err
		}
		return fmt.Sprintf("no thumbnail: uploading it failed: %v", err), nil
	}
	return "", nil
}

// bytesOf reads s's bytes: from this machine when it has them as
// recorded (checked against the sha256), else from the store.
func (l *linker) bytesOf(ctx context.Context, s *source) ([]byte, error) {
	if path, ok := l.localFile(s); ok {
		if data, err := os.ReadFile(path); err == nil && hashOf(data) == s.sha {
			return data, nil
		}
	}
	return l.b.Read(ctx, s.sha, s.out.Size)
}

// hashOf is the hex sha256 of data.
func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
