package command

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/genform/genform/statefile"
)

// Version is genform's version; release builds set it with
// -ldflags "-X github.com/genform/genform/internal/command.Version=v1.2.3".
var Version = "dev"

func init() {
	register(&command{
		name:     "version",
		synopsis: "Show the version of genform, Go and the state schema",
		usage:    "Usage: genform version\n\n  Prints genform's version, the Go version it was built with and the\n  state file schema version it reads and writes.\n",
		run:      runVersion,
	})
}

func runVersion(env *Env, args []string) int {
	if len(args) > 0 {
		return env.Errorf("version takes no arguments")
	}
	v := Version
	if v == "dev" {
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
	}
	fmt.Fprintf(env.Stdout, "genform %s\ngo %s %s/%s\nstate schema %d\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH, statefile.SchemaVersion)
	return ExitOK
}
