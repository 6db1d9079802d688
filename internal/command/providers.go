package command

import (
	"flag"

	"github.com/genform/genform/internal/catalog"
	"github.com/genform/genform/internal/views"
)

func init() {
	register(&command{
		name:     "providers",
		synopsis: "Show the live providers genform speaks and what they take",
		usage: `Usage: genform providers [-json]

  Prints every live provider genform speaks: what it makes, which models
  take a seed, a negative prompt, key frames (and how many), which
  durations and sizes, whether a create whose answer was lost can be
  found again, whether a job can be cancelled, how long its output URLs
  live, its documented limits, the environment variable of its key, and
  the models genform's tables list. It contacts no provider.

Options:

  -json  Print it as a JSON document on stdout:
         {"format_version": "1", "providers": [...]}.
`,
		run: runProviders,
	})
}

func runProviders(env *Env, args []string) int {
	c := commands["providers"]
	fs := flag.NewFlagSet("providers", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	if ok, code := parseFlags(env, c, fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return env.Errorf("providers takes no arguments; run genform providers -json for the document")
	}
	if err := views.NewProviders(&env.Streams, formatOf(*asJSON, views.Human)).Providers(catalog.Providers()); err != nil {
		return env.Errorf("%v", err)
	}
	return 0
}
