package command

import (
	"flag"
	"fmt"
	"strings"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/backend"
	"github.com/genform/genform/internal/views"
)

func init() {
	register(&command{
		name:     "workspace",
		synopsis: "Manage workspaces: list, show, new, select, delete",
		usage: `Usage: genform workspace <subcommand> [flags] [NAME]

  Workspaces, as Terraform's: each has its own state and lock in the
  configured storage (the state file's folder, or the PostgreSQL
  database), and one history serves them all, so a generation made in one
  (a pull request's preview) is restored in another (main, after the
  merge) at no cost. default is the state as it always was. Every command
  acts on the selected workspace: GENFORM_WORKSPACE when it is set, else
  the one workspace select chose, else default.

Subcommands:
  list                 list the workspaces; * marks the selected one
  show                 print the selected workspace's name
  new NAME             make a workspace, empty, and select it
  select NAME          select a workspace that exists
  delete [-force] NAME delete a workspace's state; its history is kept in
                       default's. It refuses a workspace that still manages
                       files, or holds submissions an interrupted apply
                       left, unless -force; files on disk and every object
                       in the store stay

Names are letters, digits, '-', '_' and '.', beginning with a letter or
digit, at most 40 characters.

Flags (every subcommand):
` + readFlagsUsage,
		run: runWorkspace,
	})
}

var workspaceSubcommands = []string{"list", "show", "new", "select", "delete"}

func runWorkspace(env *Env, args []string) int {
	c := commands["workspace"]
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, c.usage)
		return ExitError
	}
	if args[0] == "-help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(env.Stdout, c.usage)
		return ExitOK
	}
	sub := args[0]
	if strings.HasPrefix(sub, "-") {
		// A flag where the subcommand goes is not repeated: its value may
		// be a secret (-var).
		return env.Errorf("workspace takes its subcommand first (%s), then its flags, e.g. genform workspace list -lock-timeout=30s", strings.Join(workspaceSubcommands, ", "))
	}
	known := false
	for _, s := range workspaceSubcommands {
		known = known || s == sub
	}
	if !known {
		msg := fmt.Sprintf("unknown workspace subcommand %q", sub)
		if s := config.Suggest(sub, workspaceSubcommands); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return env.Errorf("%s; the subcommands are %s", msg, strings.Join(workspaceSubcommands, ", "))
	}
	fs := flag.NewFlagSet("workspace "+sub, flag.ContinueOnError)
	var rf readFlags
	rf.register(fs)
	force := false
	if sub == "delete" {
		fs.BoolVar(&force, "force", false, "")
	}
	takes, max := "no arguments", 0
	if sub == "new" || sub == "select" || sub == "delete" {
		takes, max = "one workspace name", 1
	}
	if ok, code := parseFlags(env, c, fs, args[1:]); !ok {
		return code
	}
	if msg := extraArgs("workspace "+sub, takes, fs, args[1:], max); msg != "" {
		return env.Errorf("%s", msg)
	}
	name := fs.Arg(0)
	if max == 1 {
		if name == "" {
			return env.Errorf("workspace %s takes %s, e.g. genform workspace %s pr-12", sub, takes, sub)
		}
		if err := backend.CheckWorkspace(name); err != nil {
			return env.Errorf("%v", err)
		}
	}
	ws, _ := loadForReading(env, rf.vars.options(env))
	if ws == nil {
		return ExitError
	}
	v := views.NewWorkspace(&env.Streams)
	fromEnv := env.Getenv(backend.WorkspaceEnv)
	switch sub {
	case "list":
		names, err := ws.Workspaces()
		if err != nil {
			return env.Errorf("%v", err)
		}
		v.List(names, ws.Name)
	case "show":
		v.Show(ws.Name)
	case "new":
		if err := ws.NewWorkspace(name, rf.lockTimeout); err != nil {
			return env.Errorf("%v", err)
		}
		if fromEnv != "" {
			v.Created(name, false, backend.WorkspaceEnv)
			return ExitOK
		}
		if err := backend.Select(name); err != nil {
			return env.Errorf("workspace %s was made, but not selected: %v", name, err)
		}
		v.Created(name, true, backend.WorkspaceEnv)
	case "select":
		if fromEnv != "" {
			return env.Errorf("%s=%s selects the workspace, over genform workspace select; unset it (or set it to %s) to use workspace %s", backend.WorkspaceEnv, fromEnv, name, name)
		}
		exists, err := ws.WorkspaceExists(name)
		if err != nil {
			return env.Errorf("%v", err)
		}
		if !exists {
			return env.Errorf("workspace %q does not exist; genform workspace new %s makes it (genform workspace list shows those that do)", name, name)
		}
		if err := backend.Select(name); err != nil {
			return env.Errorf("%v", err)
		}
		v.Switched(name)
	case "delete":
		d, err := ws.DeleteWorkspace(name, force, rf.lockTimeout)
		if err != nil {
			return env.Errorf("%v", err)
		}
		v.Deleted(d)
	}
	return ExitOK
}
