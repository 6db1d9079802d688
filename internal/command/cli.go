package command

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"sort"

	"github.com/fatih/color"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/views"
)

// Exit codes, as docs/commands.md documents them.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitChanges     = 2 // plan -detailed-exitcode with changes present
	ExitUnformatted = 3 // fmt -check found files to change
	ExitInterrupted = 130
)

// Env is what a command gets from the process: its streams, the environment
// and whether colour is on. Commands never touch os.Stdout or os.Getenv
// directly, so they can be run in-process by tests.
type Env struct {
	views.Streams
	Stdin io.Reader
	// Environ lists the process environment as KEY=VALUE pairs.
	Environ func() []string
}

// Errorf prints an error in the house format and returns ExitError.
func (e *Env) Errorf(format string, args ...any) int {
	e.Streams.Errorf(format, args...)
	return ExitError
}

// command is one genform command. Each command file registers its own.
type command struct {
	name     string
	synopsis string // one line for the command list
	usage    string // full help text, starting with the usage line
	run      func(env *Env, args []string) int
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("cli: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// Run runs genform with the given arguments (without the program name) and
// returns the process exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &Env{
		Streams: views.Streams{Stdout: stdout, Stderr: stderr, Getenv: os.Getenv},
		Stdin:   stdin,
		Environ: os.Environ,
	}
	global := flag.NewFlagSet("genform", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	chdir := global.String("chdir", "", "switch to DIR before running the command")
	noColor := global.Bool("no-color", false, "disable colour")
	help := global.Bool("help", false, "show help")
	global.BoolVar(help, "h", false, "show help")
	versionFlag := global.Bool("version", false, "print the version")
	failed := guardValues(global)
	if err := global.Parse(args); err != nil {
		fmt.Fprintf(stderr, "Error: %s\n\n", flagError(err, failed))
		printUsage(stderr)
		return ExitError
	}
	env.Color = !*noColor && env.Getenv("NO_COLOR") == "" && views.IsTerminal(stdout)
	color.NoColor = !env.Color

	rest := global.Args()
	if *versionFlag {
		rest = []string{"version"}
	}
	if *help || len(rest) == 0 {
		printUsage(stdout)
		if *help {
			return ExitOK
		}
		return ExitError
	}
	if *chdir != "" {
		if err := os.Chdir(*chdir); err != nil {
			// The error names the path; say only why.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return env.Errorf("-chdir: the directory cannot be entered (%v); pass an existing directory", err)
		}
	}
	name := rest[0]
	if name == "help" {
		if len(rest) > 1 {
			if c, ok := commands[rest[1]]; ok {
				fmt.Fprint(stdout, c.usage)
				return ExitOK
			}
		}
		printUsage(stdout)
		return ExitOK
	}
	c, ok := commands[name]
	if !ok {
		msg := fmt.Sprintf("unknown command %q", name)
		if s := config.Suggest(name, commandNames()); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		env.Errorf("%s (run 'genform -help' for the list)", msg)
		return ExitError
	}
	return runCommand(env, c, rest[1:])
}

// runCommand runs c. A panic in it is a bug, and Go would end the process
// with status 2, which plan -detailed-exitcode means as "changes present":
// a crash is reported as an error instead, with what a bug report needs.
func runCommand(env *Env, c *command, args []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(env.Stderr, "Error: genform %s crashed, which is a bug in genform; please report it with this message: %v\n\n%s", c.name, r, debug.Stack())
			code = ExitError
		}
	}()
	return c.run(env, args)
}

func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, "Usage: genform [-chdir=DIR] [-no-color] <command> [flags] [args]\n\n")
	fmt.Fprint(w, "genform plans and applies the images and videos declared in *.gen.hcl files.\n\nCommands:\n")
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].synopsis)
	}
	fmt.Fprint(w, "\nGlobal flags:\n  -chdir=DIR  switch to DIR before running the command\n  -no-color   disable colour in the output (also taken after the command)\n")
	fmt.Fprint(w, "\nRun 'genform <command> -help' for a command's flags.\n")
}
