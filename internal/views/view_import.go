package views

import (
	"fmt"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/operation/outcome"
	"github.com/genform/genform/internal/words"
	"github.com/genform/genform/reconcile/apply"
	"github.com/genform/genform/statefile"
)

// Import is the view of genform import of creation id as addr.
type Import interface {
	// Started says that the creation is being fetched from services.
	Started(services outcome.Services)
	// Warnings says what the creation differs in from the declaration,
	// and what else the import noticed; promptSensitive is whether the
	// declared prompt is made from a secret.
	Warnings(list []apply.ImportWarning, promptSensitive bool)
	// Interrupted says that the import was interrupted before it
	// recorded anything.
	Interrupted()
	// Imported says that rec was adopted, and which of its files the
	// object store did not take.
	Imported(rec *statefile.Resource, unstored []apply.Unstored)
	// ServiceFailed ends an import err stopped before it recorded
	// anything; tokenSet is false when no token was sent at all.
	ServiceFailed(err error, tokenSet bool)
}

// NewImport is the view of importing creation id as addr.
func NewImport(s *Streams, addr addrs.Instance, id string) Import {
	return importHuman{Streams: s, addr: addr, id: id}
}

type importHuman struct {
	*Streams
	addr addrs.Instance
	id   string
}

func (v importHuman) Started(services outcome.Services) {
	fmt.Fprintf(v.Stdout, "%s: importing creation %s from %s\n", v.addr, v.id, serviceLine(services))
}

func (v importHuman) Warnings(list []apply.ImportWarning, promptSensitive bool) {
	for _, w := range list {
		fmt.Fprintf(v.Stderr, "Warning: %s\n", words.ImportWarning(v.addr, v.id, w, promptSensitive))
	}
}

func (v importHuman) Interrupted() {
	fmt.Fprintln(v.Stderr, "Interrupted: nothing was recorded; run the import again.")
}

func (v importHuman) Imported(rec *statefile.Resource, unstored []apply.Unstored) {
	fmt.Fprintf(v.Stdout, "%s %s adopted creation %s: %d file%s in %s.\n",
		Success("Import successful!"), v.addr, rec.CreationID, len(rec.Outputs), words.Plural(len(rec.Outputs)), rec.Dir)
	writeUnstored(v.Streams, unstored)
}

func (v importHuman) ServiceFailed(err error, tokenSet bool) {
	serviceFailed(v.Streams, tokenSet, err, "nothing was imported")
}
