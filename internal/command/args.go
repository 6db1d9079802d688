package command

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fatih/color"
)

// Command lines carry secrets: -var 'token=...' is how a sensitive
// variable is set, and a flag typed after an argument is not read as a
// flag, so its value ends up among the arguments. No usage error quotes
// what was typed, then: an argument is named by its position, a flag by
// its name, and a refused flag value by what the flag takes.

// parseFlags parses a command's flags, printing its usage on -help and a
// clear error otherwise. ok is false when the command should return code.
// A flag that follows an argument is an error here, for every command:
// the flag package stops at the first argument, so the flag would be
// taken for an argument, and its value with it.
func parseFlags(env *Env, c *command, fs *flag.FlagSet, args []string) (ok bool, code int) {
	fs.SetOutput(io.Discard)
	// -no-color is a global flag that Terraform users also type after the
	// command (genform plan -no-color); every command takes it there too.
	var noColor *bool
	if fs.Lookup("no-color") == nil {
		noColor = fs.Bool("no-color", false, "")
	}
	defer func() {
		if noColor != nil && *noColor {
			env.Color = false
			color.NoColor = true
		}
	}()
	failed := guardValues(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(env.Stdout, c.usage)
			return false, ExitOK
		}
		fmt.Fprintf(env.Stderr, "Error: %s\n\n%s", flagError(err, failed), c.usage)
		return false, ExitError
	}
	if msg := strayFlags(fs, args); msg != "" {
		fmt.Fprintf(env.Stderr, "Error: %s\n\n%s", msg, c.usage)
		return false, ExitError
	}
	return true, ExitOK
}

// parseArgs parses a command's flags as parseFlags does, then refuses
// more than max arguments, saying that the command takes takes.
func parseArgs(env *Env, name string, fs *flag.FlagSet, args []string, takes string, max int) (ok bool, code int) {
	if ok, code := parseFlags(env, commands[name], fs, args); !ok {
		return false, code
	}
	if msg := extraArgs(name, takes, fs, args, max); msg != "" {
		return false, env.Errorf("%s", msg)
	}
	return true, ExitOK
}

// flagFailure is the flag whose value was refused, and why, in words
// that do not repeat the value.
type flagFailure struct {
	name, why string
}

// guardedValue wraps a flag's Value to note which flag refused its value:
// the flag package's own error quotes the value.
type guardedValue struct {
	flag.Value
	name   string
	failed *flagFailure
}

func (g *guardedValue) Set(s string) error {
	err := g.Value.Set(s)
	if err != nil && g.failed.name == "" {
		*g.failed = flagFailure{name: g.name, why: valueWant(g.Value, err)}
	}
	return err
}

// IsBoolFlag keeps -flag (without =true) working for boolean flags.
func (g *guardedValue) IsBoolFlag() bool {
	b, ok := g.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// guardValues wraps every flag of fs; the result says which one refused
// its value, if one did.
func guardValues(fs *flag.FlagSet) *flagFailure {
	failed := &flagFailure{}
	fs.VisitAll(func(f *flag.Flag) {
		if _, done := f.Value.(*guardedValue); !done {
			f.Value = &guardedValue{Value: f.Value, name: f.Name, failed: failed}
		}
	})
	return failed
}

// valueWant says what a flag takes, from the type of its value. Errors of
// genform's own flag types are written never to quote the value; the
// standard library's (strconv, time) do, so they are not passed on.
func valueWant(v flag.Value, err error) string {
	var safe *safeFlagError
	if errors.As(err, &safe) {
		return safe.msg
	}
	if g, ok := v.(flag.Getter); ok {
		switch g.Get().(type) {
		case bool:
			return "it takes true or false"
		case int, int64, uint, uint64:
			return "it takes a whole number"
		case float64:
			return "it takes a number"
		case time.Duration:
			return "it takes a duration such as 30s, 2m or 1h30m"
		}
	}
	return "it cannot be read"
}

// safeFlagError is an error of one of genform's flag types, which says
// what is wrong without quoting the value.
type safeFlagError struct{ msg string }

func (e *safeFlagError) Error() string { return e.msg }

// flagError turns an error of flag.FlagSet.Parse into a message that
// names the flag and never quotes a value.
func flagError(err error, failed *flagFailure) string {
	msg := err.Error()
	switch {
	case failed.name != "":
		return fmt.Sprintf("invalid value for -%s: %s", failed.name, failed.why)
	case strings.HasPrefix(msg, "flag provided but not defined: "),
		strings.HasPrefix(msg, "flag needs an argument: "):
		// These name the flag only (the part before any '=').
		return msg
	case strings.HasPrefix(msg, "bad flag syntax: "):
		return "an argument starts with a dash but is not a flag (a flag is -name or -name=value); an argument that starts with a dash goes after --"
	}
	return "the flags could not be read"
}

// strayFlags finds flags written after the first argument, which the flag
// package took for arguments, and says so by name and position. After
// "--", everything is an argument on purpose.
func strayFlags(fs *flag.FlagSet, args []string) string {
	rest := fs.Args()
	first := len(args) - len(rest) // index in args of the first argument
	if first > 0 && args[first-1] == "--" {
		return ""
	}
	for i, a := range rest {
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name := strings.TrimLeft(a, "-")
		name, _, _ = strings.Cut(name, "=")
		if fs.Lookup(name) == nil {
			continue // not one of this command's flags: an argument
		}
		return fmt.Sprintf("the flag -%s (the %s argument) comes after the %s argument, which is not a flag, so it was not read as a flag: put every flag before the arguments", name, ordinal(first+i+1), ordinal(first+1))
	}
	return ""
}

// extraArgs says, by position, which arguments a command did not expect:
// it takes at most max, described by takes ("no arguments", "at most one
// argument, the saved plan file"). "" when there are none too many.
func extraArgs(command, takes string, fs *flag.FlagSet, args []string, max int) string {
	rest := fs.Args()
	if len(rest) <= max {
		return ""
	}
	first := len(args) - len(rest) + max + 1 // 1-based position of the first extra one
	last := len(args)
	which := fmt.Sprintf("the %s argument is", ordinal(first))
	switch {
	case last == first+1:
		which = fmt.Sprintf("the %s and %s arguments are", ordinal(first), ordinal(last))
	case last > first:
		which = fmt.Sprintf("the %s to %s arguments are", ordinal(first), ordinal(last))
	}
	msg := fmt.Sprintf("%s takes %s, and %s one too many", command, takes, which)
	if last > first {
		msg = fmt.Sprintf("%s takes %s, and %s too many", command, takes, which)
	}
	// A boolean flag takes its value joined to it: -refresh false leaves
	// "false" as an argument.
	if prev := first - 2; prev >= 0 {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[prev], "-"), "=")
		if f := fs.Lookup(name); f != nil && !hasValue && strings.HasPrefix(args[prev], "-") {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				msg += fmt.Sprintf(" (a true/false flag takes its value after an equals sign: -%s=false)", name)
			}
		}
	}
	return msg
}

// ordinal writes n as 1st, 2nd, 3rd, 4th ...
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
