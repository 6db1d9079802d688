package command

import (
	"flag"
	"runtime/debug"

	"github.com/genform/genform/internal/views"
	"github.com/genform/genform/statefile"
)

// Version is genform's version as a release build stamps it, with
// -ldflags "-X github.com/genform/genform/internal/command.Version=v1.2.3";
// "dev" otherwise, and then the build's own information says which
// version it is (stamp).
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
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if ok, code := parseArgs(env, "version", fs, args, "no arguments", 0); !ok {
		return code
	}
	bi, _ := debug.ReadBuildInfo()
	views.NewVersion(&env.Streams).Version(stamp(Version, bi), statefile.SchemaVersion)
	return ExitOK
}

// stamp is the version to print: the one a release build set; else the
// module's version, which go install of a release gives (v1.2.3) and a
// build in a checkout derives from its commit (v0.0.0-DATE-REVISION, with
// +dirty for uncommitted changes); else the commit alone, when only that
// was recorded; else "dev".
func stamp(set string, bi *debug.BuildInfo) string {
	if set != "dev" || bi == nil {
		return set
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return set
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "dev-" + rev
	if modified == "true" {
		v += "+dirty"
	}
	return v
}
