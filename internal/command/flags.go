package command

import (
	"flag"
	"strings"
	"time"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/operation"
	"github.com/genform/genform/internal/views"
)

// The flags several commands share: addresses (-target, -replace), the
// planning flags of plan, apply and destroy, and the variables.

// addrsFlag collects a repeatable instance address flag (-replace),
// refusing at parse time what is not an address.
type addrsFlag []addrs.Instance

func (s *addrsFlag) String() string { return strings.Join(addrs.Strings(*s), ",") }

func (s *addrsFlag) Set(v string) error {
	a, err := addrs.ParseInstance(v)
	if err != nil {
		// Not err itself: it quotes the value.
		return &safeFlagError{"it takes a resource address: image.NAME or video.NAME, with [N] or [\"KEY\"] for one instance of a counted or for_each resource"}
	}
	*s = append(*s, a)
	return nil
}

// targetsFlag is -target: an address, or a module's (module.NAME), which
// names every resource in it.
type targetsFlag []addrs.Instance

func (s *targetsFlag) String() string { return strings.Join(addrs.Strings(*s), ",") }

func (s *targetsFlag) Set(v string) error {
	a, err := addrs.ParseTarget(v)
	if err != nil {
		// Not err itself: it quotes the value.
		return &safeFlagError{"it takes a resource address: image.NAME or video.NAME, with [N] or [\"KEY\"] for one instance of a counted or for_each resource, or a module's, module.NAME"}
	}
	*s = append(*s, a)
	return nil
}

// The state names the service it was made with (statefile.Meta.Service).
// Every fingerprint includes the service, so a state used with another one
// plans to generate everything anew, and apply would overwrite the files
// with what that service makes: a forgotten GENFORM_BASE_URL would move a
// state made on a paid service to the built-in simulator without a word.
// So plan, apply, destroy and import call checkService before they use the
// state. The engine records the service in the same transaction as the
// first submission (or download) of an apply, and import once it has
// adopted a creation: a state names a service once something was made
// there, and an apply that reached nothing leaves it as it was.

// planFlagsUsage documents the flags planFlags registers for planning, for
// the usage text of plan and apply.
const planFlagsUsage = `  -target=ADDR         limit to ADDR and what it depends on (repeatable)
  -replace=ADDR        generate ADDR anew (repeatable)
  -var 'NAME=VALUE'    set a variable (repeatable)
  -var-file=FILE       read variables from a *.genvars.hcl file (repeatable)
  -refresh=false       do not check output files on disk
  -lock-timeout=DUR    wait this long for the state lock (default 0s)
  -migrate-service     use the configured service although the state was made
                       with another: generate anew there what was made with it
`

// planFlags are the flags plan, apply and destroy share.
type planFlags struct {
	vars        varFlags
	targets     targetsFlag
	replace     addrsFlag
	lockTimeout time.Duration
	refresh     bool
	// migrateService accepts a state made with another service than the
	// configured one (see checkService).
	migrateService bool
}

// register registers the flags; planning is true for plan and apply, which
// compare the configuration with the state and so also take -refresh and
// -migrate-service.
func (p *planFlags) register(fs *flag.FlagSet, planning bool) {
	p.vars.register(fs)
	fs.Var(&p.targets, "target", "limit to this resource address and what it depends on (repeatable)")
	fs.Var(&p.replace, "replace", "generate this resource instance anew (repeatable)")
	fs.DurationVar(&p.lockTimeout, "lock-timeout", 0, "how long to wait for the state lock")
	p.refresh = true
	if planning {
		fs.BoolVar(&p.refresh, "refresh", true, "check output files on disk")
		fs.BoolVar(&p.migrateService, "migrate-service", false, "use the configured service although the state was made with another")
	}
}

// request is the planning flags as an operation takes them.
func (p *planFlags) request() operation.PlanRequest {
	return operation.PlanRequest{
		Targets: p.targets, Replace: p.replace, Refresh: p.refresh,
		MigrateService: p.migrateService, LockTimeout: p.lockTimeout,
	}
}

// readFlagsUsage documents the flags readFlags registers.
const readFlagsUsage = `  -var 'NAME=VALUE'    set a variable (repeatable)
  -var-file=FILE       read variables from a *.genvars.hcl file (repeatable)
  -lock-timeout=DUR    wait this long for the state lock (default 0s)
`

// readFlags are the flags of the commands that load the configuration to
// find the state and read it: the variables and -lock-timeout.
type readFlags struct {
	vars        varFlags
	lockTimeout time.Duration
}

func (r *readFlags) register(fs *flag.FlagSet) {
	r.vars.register(fs)
	fs.DurationVar(&r.lockTimeout, "lock-timeout", 0, "")
}

// formatOf is the output format the flags chose: JSON with -json,
// otherwise other (views.Human, or what another flag chose: -json wins
// over -format=markdown).
func formatOf(asJSON bool, other views.Format) views.Format {
	if asJSON {
		return views.JSON
	}
	return other
}
