package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/genform/genform/internal/backend"
	"github.com/genform/genform/internal/views"

	"github.com/genform/genform/internal/words"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile"
	"github.com/genform/genform/reconcile/apply"
	"github.com/genform/genform/statefile"
)

func init() {
	register(&command{
		name:     "import",
		synopsis: "Adopt a creation made elsewhere for a declared resource",
		usage: `Usage: genform import [flags] ADDR CREATION_ID

  Adopts an existing creation, made outside genform (on the service's site,
  by a script, or by an apply that was interrupted before it recorded the
  answer), as the declared resource instance ADDR: checks that it
  succeeded, fetches its detail, downloads its outputs into ADDR's
  directory and records it in the state with ADDR's declared request, so
  the next plan has nothing to do for it. Nothing is generated.

  ADDR must be declared in the configuration and not yet in the state;
  'genform state rm ADDR' forgets an instance to import another creation.

Flags:
  -var 'NAME=VALUE'    set a variable (repeatable)
  -var-file=FILE       read variables from a *.genvars.hcl file (repeatable)
  -lock-timeout=DUR    wait this long for the state lock (default 0s)
  -migrate-service     import from the configured service although the state
                       was made with another, and have the state name it
`,
		run: runImport,
	})
}

func runImport(env *Env, args []string) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	var vf varFlags
	vf.register(fs)
	lockTimeout := fs.Duration("lock-timeout", 0, "")
	migrate := fs.Bool("migrate-service", false, "")
	if ok, code := parseFlags(env, commands["import"], fs, args); !ok {
		return code
	}
	if msg := extraArgs("import", "two arguments, the address and the creation id", fs, args, 2); msg != "" {
		return env.Errorf("%s", msg)
	}
	if fs.NArg() != 2 {
		return env.Errorf("import takes two arguments, the address and the creation id, e.g. genform import image.hero 8f3c...; got %d", fs.NArg())
	}
	addr, err := addrs.ParseInstance(fs.Arg(0))
	if err != nil {
		return env.Errorf("%v", err)
	}
	id := fs.Arg(1)
	cfg := loadConfig(env, vf.options(env))
	if cfg == nil {
		return ExitError
	}
	store, err := backend.OpenState(cfg, "import", *lockTimeout, true)
	if err != nil {
		return env.Errorf("%v", err)
	}
	defer store.Close()
	snap, err := store.Snapshot()
	if err != nil {
		return env.Errorf("%v", err)
	}
	ep := resolveEndpoint(env, cfg)
	if _, code := checkService(env, "import", snap.Meta.Service, ep, *migrate); code != ExitOK {
		return code
	}
	if rec := snap.Resources[addr]; rec != nil {
		return env.Errorf("%s is already managed (creation %s); to adopt another creation, forget it first with 'genform state rm %s'", addr, rec.CreationID, addr.Shell())
	}
	_, insts, diags := reconcile.StateScope(cfg, snap)
	var inst *config.Instance
	for _, in := range insts {
		if in.Addr == addr {
			inst = in
		}
	}
	if inst == nil {
		if r := cfg.Resource(addr.Resource); r != nil && diags.HasErrors() && !hasInstances(insts, r.Addr()) {
			// The resource is declared but could not be expanded: say why.
			views.Diagnostics(&env.Streams, cfg.Files, diags)
			return env.Errorf("cannot import %s: the instances of %s cannot be known from the configuration and the state", addr, r.Addr())
		}
		return env.Errorf("%v", notDeclaredError(addr, cfg, insts))
	}

	client, stop, err := connect(env, cfg, ep, nil)
	if err != nil {
		return env.Errorf("%v", err)
	}
	defer stop()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	fmt.Fprintf(env.Stdout, "%s: importing creation %s from %s\n", addr, id, ep.describe())
	res, err := apply.Import(ctx, apply.ImportInput{
		Instance: inst, CreationID: id, Store: store, Service: client, ServiceID: ep.ID, Dir: ".",
	})
	if res != nil {
		for _, w := range res.Warnings {
			fmt.Fprintf(env.Stderr, "Warning: %s\n", words.ImportWarning(addr, id, w, slices.Contains(inst.Sensitive, "prompt")))
		}
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(env.Stderr, "Interrupted: nothing was recorded; run the import again.")
			return ExitInterrupted
		}
		return serviceFailed(env, ep, err, "nothing was imported")
	}
	// Recorded after the import, not before: a refused import changes
	// nothing. A crash in between leaves the state naming what it named
	// before: no service (recorded at the next apply), or the one that
	// -migrate-service moved away from, whose switch is asked again.
	if err := store.Update(func(tx *statefile.Tx) error { return tx.SetService(ep.ID) }); err != nil {
		return env.Errorf("%v", err)
	}
	rec := res.Resource
	fmt.Fprintf(env.Stdout, "%s %s adopted creation %s: %d file%s in %s.\n",
		views.Success("Import successful!"), addr, rec.CreationID, len(rec.Outputs), words.Plural(len(rec.Outputs)), rec.Dir)
	return ExitOK
}

func hasInstances(insts []*config.Instance, r addrs.Resource) bool {
	for _, in := range insts {
		if in.Addr.Resource == r {
			return true
		}
	}
	return false
}

// notDeclaredError refuses an address the configuration does not declare
// (as expanded, in declared), pointing at the nearest one, or at the
// instance addresses when the resource has count or for_each.
func notDeclaredError(addr addrs.Instance, cfg *config.Config, declared []*config.Instance) error {
	raddr := addr.Resource
	if cfg.Resource(raddr) == nil {
		msg := fmt.Sprintf("%s is not declared in the configuration; import adopts a creation for a declared resource, so add its block first", addr)
		names := make([]string, len(declared))
		for i, in := range declared {
			names[i] = in.Addr.String()
		}
		if s := suggest(addr.String(), names); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", addrs.ShellQuote(s))
		}
		return errors.New(msg)
	}
	var own []string
	for _, in := range declared {
		if in.Addr.Resource == raddr {
			own = append(own, in.Addr.String())
		}
	}
	switch {
	case len(own) == 0:
		return fmt.Errorf("%s is declared, but its count or for_each yields no instances, so there is nothing to import %s into", raddr, addr)
	case addr.Key.IsZero():
		return fmt.Errorf("%s has count or for_each: import into one of its instances, e.g. %s", addr, addrs.ShellQuote(own[0]))
	}
	if len(own) > 5 {
		own = append(own[:5], "...")
	}
	return fmt.Errorf("%s is not an instance of %s; its instances are %s", addr, raddr, strings.Join(own, ", "))
}
