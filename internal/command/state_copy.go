package command

import (
	"bytes"
	"errors"
	"io"
	"os"

	"github.com/genform/genform/internal/views"
	"github.com/genform/genform/statefile"
	"github.com/genform/genform/statefile/boltstate"
)

// state pull and state push are Terraform's: pull prints the whole state
// as its JSON document (statefile.Document), push writes such a document
// into the configured state in one transaction. Moving a state between
// storages is init -migrate-state's job.

// runStatePull prints the configured state's document on standard output.
func runStatePull(env *Env, sc *stateCmd) int {
	if msg := sc.extra("no arguments", 0); msg != "" {
		return env.Errorf("%s; it prints the state on standard output: genform state pull > state.json", msg)
	}
	ws, _ := loadForReading(env, sc.vars.options(env))
	if ws == nil {
		return ExitError
	}
	st, err := ws.ReadState("state pull", sc.lockTimeout)
	if err != nil {
		return env.Errorf("%v", err)
	}
	if st == nil {
		return env.Errorf("there is no state (%s): nothing has been applied in this directory yet", ws.StateWhere())
	}
	defer st.Close()
	doc, err := st.Document()
	if err != nil {
		return env.Errorf("%v", err)
	}
	view := views.NewState(&env.Streams)
	if err := view.Document(doc); err != nil {
		return env.Errorf("%v", err)
	}
	// The document holds every record as it is, for state push to put it
	// back: what is made from a sensitive value included. Said on stderr.
	held, err := ws.SensitiveRecords(st)
	if err != nil {
		return env.Errorf("%v", err)
	}
	view.SensitiveHeld(held)
	return ExitOK
}

// runStatePush replaces the configured state with the state document
// FILE ("-" for standard input). Unless -force, a document of another
// lineage, or older than the state, is refused (statefile.Store.Push).
func runStatePush(env *Env, sc *stateCmd) int {
	if msg := sc.extra("one file", 1); msg != "" {
		return env.Errorf("%s", msg)
	}
	if len(sc.args) != 1 {
		return env.Errorf("state push takes the state document to push, as genform state pull prints it: genform state push state.json (or - for standard input)")
	}
	file := sc.args[0]
	from := file
	var data []byte
	var err error
	if file == "-" {
		from = "standard input"
		data, err = io.ReadAll(env.Stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return env.Errorf("reading %s: %v", from, err)
	}
	if boltstate.IsStateFile(data) {
		return env.Errorf("%s is a state file, not a state document: state push writes what genform state pull prints. To move a state file's state into the configured storage, run genform init -migrate-state", from)
	}
	doc, err := statefile.ReadDocument(bytes.NewReader(data))
	if err != nil {
		return env.Errorf("reading %s: %v; nothing was changed", from, err)
	}
	ws := load(env, sc.vars.options(env))
	if ws == nil {
		return ExitError
	}
	dst, err := ws.OpenState("state push", sc.lockTimeout, true)
	if err != nil {
		return env.Errorf("%v", err)
	}
	defer dst.Close()
	c, err := dst.Push(doc, from, sc.force)
	var lose *statefile.LoseError
	if errors.As(err, &lose) {
		return env.Errorf("pushing %s: %v; nothing was changed. Pass -force to replace it anyway", from, err)
	}
	if err != nil {
		return env.Errorf("pushing %s: %v; nothing was changed", from, err)
	}
	views.NewState(&env.Streams).Pushed(from, ws.StateWhere(), c)
	return ExitOK
}
