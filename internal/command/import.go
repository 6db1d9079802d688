package command

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/signal"
	"syscall"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/operation"
	"github.com/genform/genform/internal/views"
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
` + readFlagsUsage + `  -migrate-service     import from the configured service although the state
                       was made with another, and have the state name it
`,
		run: runImport,
	})
}

func runImport(env *Env, args []string) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	var rf readFlags
	rf.register(fs)
	migrate := fs.Bool("migrate-service", false, "")
	if ok, code := parseArgs(env, "import", fs, args, "two arguments, the address and the creation id", 2); !ok {
		return code
	}
	if fs.NArg() != 2 {
		return env.Errorf("import takes two arguments, the address and the creation id, e.g. genform import image.hero 8f3c...; got %d", fs.NArg())
	}
	addr, err := addrs.ParseInstance(fs.Arg(0))
	if err != nil {
		return env.Errorf("%v", err)
	}
	id := fs.Arg(1)
	ws := load(env, rf.vars.options(env))
	if ws == nil {
		return ExitError
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	view := views.NewImport(&env.Streams, addr, id)
	imported, diags, err := ws.Import(ctx, operation.ImportRequest{
		Addr: addr, CreationID: id, LockTimeout: rf.lockTimeout, MigrateService: *migrate,
		Started: view.Started,
	})
	diagnose(env, ws, diags)
	if imported != nil {
		view.Warnings(imported.Warnings, imported.PromptSensitive)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			view.Interrupted()
			return ExitInterrupted
		}
		view.ServiceFailed(err, ws.Endpoint.Token != "")
		return ExitError
	}
	view.Imported(imported.Resource, imported.Unstored)
	if len(imported.Unstored) > 0 {
		return ExitError
	}
	return ExitOK
}
