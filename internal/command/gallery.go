package command

import (
	"flag"
	"path/filepath"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/gallery"
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
	var rf readFlags
	rf.register(fs)
	if ok, code := parseArgs(env, "gallery", fs, args, "no arguments (name the page with -out=FILE)", 0); !ok {
		return code
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
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "since" {
			from = *since
		}
	})
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
