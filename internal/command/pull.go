package command

import (
	"flag"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/operation"
	"github.com/genform/genform/internal/views"
)

func init() {
	register(&command{
		name:     "pull",
		synopsis: "Fetch the recorded files from the object store into place",
		usage: `Usage: genform pull [flags] [ADDR...]

  Fetches from the object store (the genform block's store "s3" block) the
  files of every declared instance, or of the instances named, that are
  missing or changed on disk, several at once, each checked against the
  sha256 the state records before it is put in place. Nothing is asked of
  a provider and nothing is paid for. A file the store lacks, or whose
  object holds other bytes, is an error naming it; no wrong file is ever
  written under a final name. The state is read, not written.

Flags:
  -parallelism=N       files fetched at once (default 8)
` + readFlagsUsage,
		run: func(env *Env, args []string) int { return runTransfer(env, "pull", args) },
	})
	register(&command{
		name:     "push",
		synopsis: "Upload the recorded files the object store lacks",
		usage: `Usage: genform push [flags] [ADDR...]

  Uploads to the object store the files of every declared instance, or of
  the instances named, that it does not hold yet (a state made before the
  store was configured, or uploads an apply could not finish), and records
  that it holds them. Objects are named by the sha256 of their bytes, so
  a file already there is not sent again. A file missing or changed on
  disk is not uploaded: pull or apply brings the recorded one back first.

  The generations in the history (of those instances) go up too when the
  local cache holds their files, so that a teammate restores them from
  the store rather than from a provider whose links have expired.

Flags:
  -parallelism=N       files uploaded at once (default 8)
` + readFlagsUsage,
		run: func(env *Env, args []string) int { return runTransfer(env, "push", args) },
	})
}

// runTransfer is pull and push: they differ only in direction.
func runTransfer(env *Env, name string, args []string) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	parallelism := fs.Int("parallelism", 8, "")
	var rf readFlags
	rf.register(fs)
	if ok, code := parseFlags(env, commands[name], fs, args); !ok {
		return code
	}
	if *parallelism < 1 {
		return env.Errorf("-parallelism must be at least 1")
	}
	var names []addrs.Instance
	for _, a := range fs.Args() {
		addr, err := addrs.ParseInstance(a)
		if err != nil {
			return env.Errorf("%q is not an address: %s takes resource addresses such as image.NAME or image.NAME[\"KEY\"]", a, name)
		}
		names = append(names, addr)
	}
	ws, _ := loadForReading(env, rf.vars.options(env))
	if ws == nil {
		return ExitError
	}
	ctx, stop := interruptible(env)
	defer stop()
	view := views.NewTransfer(&env.Streams, name == "pull")
	opts := operation.TransferOptions{Addrs: names, Parallelism: *parallelism, LockTimeout: rf.lockTimeout, Progress: view.Progress}
	transfer := ws.Push
	if name == "pull" {
		transfer = ws.Pull
	}
	res, err := transfer(ctx, opts)
	view.Result(res)
	if err != nil {
		return env.Errorf("%v", err)
	}
	if ctx.Err() != nil {
		return ExitInterrupted
	}
	if len(res.Failed) > 0 {
		return ExitError
	}
	return ExitOK
}
