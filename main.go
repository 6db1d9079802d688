// Command genform is a declarative reconciler for generated media: it plans
// and applies image and video generations declared in *.gen.hcl files.
package main

import (
	"os"

	"github.com/genform/genform/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
