package command

import (
	"flag"
	"path/filepath"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/gallery"
	"github.com/genform/genform/internal/operation"
	"github.com/genform/genform/internal/views"
	"github.com/genform/genform/internal/workdir"
)

func init() {
	register(&command{
		name:     "gallery",
		synopsis: "Write a static HTML page showing every managed output",
		usage: `Usage: genform gallery [flags]

  Writes one HTML page showing every output recorded in the state: images
  inline, videos playable, each with its address, prompt, seed, creation id
  and status. The page needs no server and loads nothing from anywhere: by
  default every file is embedded in it, so it can be mailed or attached to
  a review as it is. It reads the state and the files; it changes nothing.

  Every resource generated anew since the state's previous serial (the one
  before the last apply, or -since=SERIAL) shows the generation it replaced
  beside the new one, both labelled with their prompts, its files taken
  from the history's cache.

Flags:
  -out=FILE            where to write the page (default gallery.html)
  -link                reference the output files by their path relative to
                       the page instead of embedding them (for outputs too
                       large to embed; the page then needs the files beside it)
  -since=SERIAL        show before and after for what was generated after
                       state serial SERIAL (default: the serial before the
                       last command that changed the state)
  -changed             show only the resources generated anew since then

Comparing two workspaces (a pull request's preview and what it merges into):
  -base=NAME           compare the selected workspace with workspace NAME:
                       every instance whose outputs differ (new, changed or
                       deleted), before and after, as thumbnails served from
                       the object store (its store block's presign or
                       public_url says how they are linked), with each
                       prompt's word diff, seed, model and price
  -format=markdown     write the comparison as a pull request's comment, to
                       standard output or -out=FILE (with -base)
  -parallelism=N       outputs looked at, uploaded and fetched at once
                       (default 8; with -base)
` + readFlagsUsage,
		run: runGallery,
	})
}

func runGallery(env *Env, args []string) int {
	fs := flag.NewFlagSet("gallery", flag.ContinueOnError)
	out := fs.String("out", "gallery.html", "")
	link := fs.Bool("link", false, "")
	since := fs.Uint64("since", 0, "")
	changed := fs.Bool("changed", false, "")
	base := fs.String("base", "", "")
	format := fs.String("format", "", "")
	parallelism := fs.Int("parallelism", 8, "")
	var rf readFlags
	rf.register(fs)
	if ok, code := parseArgs(env, "gallery", fs, args, "no arguments (name the page with -out=FILE)", 0); !ok {
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *format != "" && *format != "markdown" {
		return env.Errorf("-format takes only markdown (a pull request's comment; without it the gallery is an HTML page)")
	}
	if set["parallelism"] && !set["base"] {
		return env.Errorf("-parallelism is for -base, which fetches and uploads the comparison's files; the page of one workspace's state reads only local files")
	}
	if set["base"] || *format != "" {
		for _, name := range []string{"link", "since", "changed"} {
			if set[name] {
				return env.Errorf("-%s is for the page of one workspace's state; -base compares two workspaces and shows only what differs", name)
			}
		}
		if *base == "" {
			return env.Errorf("-format=markdown writes a pull request's comment comparing two workspaces: name the one it merges into with -base=NAME (genform workspace list shows them)")
		}
		out := *out
		if !set["out"] {
			out = ""
		}
		return runGalleryCompare(env, rf, *base, *format, out, *parallelism)
	}
	if *out == "" {
		return env.Errorf("-out is empty; name the page to write, e.g. -out=gallery.html")
	}
	ws, _ := loadForReading(env, rf.vars.options(env))
	if ws == nil {
		return ExitError
	}
	cfg := ws.Config
	// The state as last committed, also while an apply runs: a file the
	// apply replaces meanwhile is shown as changed on disk since apply.
	st, err := ws.ReadState("gallery", rf.lockTimeout)
	if err != nil {
		return env.Errorf("%v", err)
	}
	if st == nil {
		return env.Errorf("no state: run genform apply first (there is no state at %s)", ws.StateWhere())
	}
	defer st.Close()
	snap, err := st.Snapshot()
	if err != nil {
		return env.Errorf("reading the state: %v", err)
	}

	outAbs, err := filepath.Abs(*out)
	if err != nil {
		return env.Errorf("-out=%s: %v", *out, err)
	}
	entries, err := st.History(addrs.Instance{})
	if err != nil {
		return env.Errorf("reading the history: %v", err)
	}
	from := snap.Meta.RunStart
	if set["since"] {
		from = *since
	}
	if from > snap.Meta.Serial {
		return env.Errorf("-since=%d is past the state's serial, %d; give a serial the state has reached ('genform show -json' prints it)", from, snap.Meta.Serial)
	}
	page := gallery.Build(snap, ws.StateWhere(), filepath.Dir(outAbs), *link, ws.Hider())
	page.Compare(snap, entries, workdir.CacheOf(cfg, "."), from, *changed, ws.Hider())
	if !*link && page.EmbedBytes > gallery.EmbedLimit {
		return env.Errorf("the outputs total %s, more than the %s one self-contained page can hold; rerun with -link to reference the files by their relative path instead", gallery.ByteSize(page.EmbedBytes), gallery.ByteSize(gallery.EmbedLimit))
	}
	size, err := gallery.Write(outAbs, page)
	if err != nil {
		return env.Errorf("writing the gallery: %v", err)
	}
	views.NewGallery(&env.Streams).Written(*out, page, size)
	return ExitOK
}

// runGalleryCompare is gallery -base: the selected workspace compared with
// base, as a page or (format markdown) a pull request's comment, its
// pictures in the object store.
func runGalleryCompare(env *Env, rf readFlags, base, format, out string, parallelism int) int {
	if parallelism < 1 {
		return env.Errorf("-parallelism must be at least 1")
	}
	f := views.Human
	if format == "markdown" {
		f = views.Markdown
	}
	view := views.NewGalleryComparison(&env.Streams, f)
	ws, _ := loadForReading(env, rf.vars.options(env))
	if ws == nil {
		return ExitError
	}
	ctx, stop := interruptible(env)
	defer stop()
	cmp, err := ws.CompareWorkspaces(ctx, operation.CompareOptions{Base: base, LockTimeout: rf.lockTimeout, Parallelism: parallelism})
	if err != nil {
		return env.Errorf("%v", err)
	}
	if err := view.Compared(out, cmp); err != nil {
		return env.Errorf("%v", err)
	}
	return ExitOK
}
