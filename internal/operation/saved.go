package operation

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/formats/jsonplan"
	"github.com/genform/genform/internal/formats/planfile"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// A saved plan is a file anyone could have edited: nothing in it is
// trusted. apply PLANFILE and show PLANFILE both go through planSaved,
// which plans again from the configuration and the state and refuses the
// file unless it says what that plan says, to the last action, request,
// count and shown value (prompt, model, prices). What apply carries out,
// and what show prints, is that plan, never the file's own fields: the
// words of a reason, which the file keeps for the reader of its JSON, are
// the only part not compared, and they too are planning's own.

// ShowSaved is the plan that applying saved would carry out, for show
// PLANFILE: the check apply makes, on the state as last committed, opened
// for reading only. It takes no lock a writer would wait on and writes
// nothing, so it runs beside an apply, on a read-only checkout, and with a
// database role that may only read; like plan, it needs no key. An error
// is apply's refusal of the file.
func (w *Workspace) ShowSaved(saved *planfile.Saved, lockTimeout time.Duration) (*plans.Plan, hcl.Diagnostics, error) {
	st, err := w.ReadState("show", lockTimeout)
	if err != nil {
		return nil, nil, err
	}
	if st != nil {
		defer st.Close()
	}
	history := w.histories(st, lockTimeout)
	defer history.close()
	return w.planSaved("show", saved, st, history, false)
}

// planSaved is the check of a saved plan that apply and show share: the
// service, the configuration's hash, the state's lineage and serial, then
// a plan made again from the configuration and st (nil when there is no
// state) and history with the file's -target, -replace and -refresh,
// which the file's changes and prices must match (sameChanges). It returns
// that new plan.
// migrate is apply's -migrate-service; the file's own switch is taken
// from it.
func (w *Workspace) planSaved(command string, saved *planfile.Saved, st *statefile.Store, history *histories, migrate bool) (*plans.Plan, hcl.Diagnostics, error) {
	var meta statefile.Meta
	if st != nil {
		var err error
		if meta, err = st.Meta(); err != nil {
			return nil, nil, err
		}
	}
	if _, err := w.checkService(command, meta.Service, migrate || saved.MigratesFrom(meta.Service)); err != nil {
		return nil, nil, err
	}
	if err := w.checkSaved(saved.Plan, meta); err != nil {
		return nil, nil, err
	}
	var snap *statefile.Snapshot
	if st != nil {
		var err error
		if snap, err = st.PlanSnapshot(); err != nil {
			return nil, nil, err
		}
		// Read apart from meta: a reader that holds no lock may see a
		// commit made in between, which the plan must be checked against.
		if err := w.checkSaved(saved.Plan, snap.Meta); err != nil {
			return nil, nil, err
		}
	}
	sp := saved.Plan
	plan, diags := w.makePlan(snap, history, PlanRequest{Targets: sp.Targets, Replace: sp.Replace, Refresh: !saved.NoRefresh})
	if diags.HasErrors() {
		return nil, diags, nil
	}
	if err := sameChanges(command, sp, plan); err != nil {
		return nil, diags, err
	}
	return plan, diags, nil
}

// checkSaved refuses a plan made for another service, state or
// configuration.
func (w *Workspace) checkSaved(plan *plans.Plan, meta statefile.Meta) error {
	switch {
	case plan.Service != w.Endpoint.ID:
		return fmt.Errorf("the saved plan was made for service %s, but this configuration uses %s; run plan again", plan.Service, w.Endpoint.ID)
	case plan.ConfigHash != w.Config.Hash:
		return fmt.Errorf("the saved plan is stale: the configuration or its variables changed since it was made; run 'genform plan -out=FILE' again")
	case plan.Lineage != "" && plan.Lineage != meta.Lineage:
		return fmt.Errorf("the saved plan is stale: it was made for another state (lineage %s, this one is %s); run plan again", plan.Lineage, meta.Lineage)
	case plan.Serial != meta.Serial && !(plan.Lineage == "" && meta.Serial <= 1):
		return fmt.Errorf("the saved plan is stale: the state changed since it was made (serial %d, now %d); run 'genform plan -out=FILE' again", plan.Serial, meta.Serial)
	}
	return nil
}

// sameChanges refuses a saved plan whose changes are not the ones planning
// makes now: another action, request, count of files, length, job,
// directory, or instance, or another value shown of a change (an
// attribute, the model, its prices) or other prices. The words of the
// reasons are not compared: they are not carried out, and apply and show
// use planning's own.
func sameChanges(command string, saved, now *plans.Plan) error {
	outcome := "nothing was submitted"
	if command == "show" {
		outcome = "apply would refuse it, so it is not shown"
	}
	stale := func(format string, args ...any) error {
		return fmt.Errorf("the saved plan does not match what the configuration and the state give now: %s; %s. A saved plan is applied only as planning makes it: run 'genform plan -out=FILE' again", fmt.Sprintf(format, args...), outcome)
	}
	byAddr := make(map[addrs.Instance]*plans.Change, len(now.Changes))
	for _, c := range now.Changes {
		byAddr[c.Addr] = c
	}
	for _, s := range saved.Changes {
		c, ok := byAddr[s.Addr]
		if !ok {
			return stale("it has a change for %s, which planning does not make", s.Addr)
		}
		delete(byAddr, s.Addr)
		switch {
		case c.Action != s.Action:
			return stale("it says %s for %s, and planning says %s", s.Action, s.Addr, c.Action)
		case c.Fingerprint != s.Fingerprint:
			return stale("the request of %s is no longer the one the plan showed (a file or environment value it reads changed, or the plan file was edited)", s.Addr)
		case c.Media != s.Media || c.Seconds != s.Seconds || c.AtMost != s.AtMost:
			return stale("it counts %d file(s) of %d s for %s, and planning %d of %d s", s.Media, s.Seconds, s.Addr, c.Media, c.Seconds)
		case c.PrevAddr != s.PrevAddr || c.GenerationID != s.GenerationID || c.Dir != s.Dir || !slices.Equal(c.Redownload, s.Redownload):
			return stale("what it does for %s is not what planning does now", s.Addr)
		}
		if field := shownDiffers(s, c); field != "" {
			return stale("what it shows of %s (%s) is not what planning makes now (the plan file was edited, or a file or environment value it reads changed)", s.Addr, field)
		}
	}
	for _, c := range now.Changes {
		if _, left := byAddr[c.Addr]; left {
			return stale("planning makes a change for %s (%s), which it does not have", c.Addr, c.Action)
		}
	}
	if !reflect.DeepEqual(jsonplan.EncodePrices(saved.Prices), jsonplan.EncodePrices(now.Prices)) {
		return stale("its prices are not the configuration's (the plan file was edited)")
	}
	return nil
}

// shownDiffers names the first field, by its key in the plan file, whose
// value the file gives for change saved and planning does not give for
// now: "" when every one is the same. Both are taken as the file writes
// them (the values of sensitive attributes left out) and read back, so
// that what the file holds compares equal to the plan it was made from.
func shownDiffers(saved, now *plans.Change) string {
	va, vb := jsonplan.EncodeValues(saved, nil), jsonplan.EncodeValues(now, nil)
	if reflect.DeepEqual(va, vb) {
		// Planning's values and the file's, read as JSON with its numbers
		// kept, are most often the very same Go values: equal values write
		// the same file. Only a difference needs the trip through JSON,
		// which tells a value apart from its JSON twin (1 and "1" are not,
		// an int and a json.Number of the same digits are).
		return ""
	}
	keys, a, errA := shownFields(va)
	_, b, errB := shownFields(vb)
	if errA != nil || errB != nil {
		// Planning makes JSON-shaped values, and the file's were read as
		// JSON: a value that cannot be written is not the one shown.
		return "values"
	}
	var extra []string
	for k := range b {
		if _, ok := a[k]; !ok {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	keys = append(keys, extra...)
	for _, k := range keys {
		if !reflect.DeepEqual(a[k], b[k]) {
			return k
		}
	}
	return ""
}

// shownFields is what the plan file says of a change's values v, read
// back as JSON: the keys in the file's order, and their values.
func shownFields(v jsonplan.Values) ([]string, map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // the opening brace
		return nil, nil, err
	}
	var keys []string
	fields := map[string]any{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := t.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, k)
		fields[k] = v
	}
	return keys, fields, nil
}
