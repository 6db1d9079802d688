package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/config"
	"github.com/genform/genform/service"
	"github.com/genform/genform/statefile"
)

// ImportInput says what Import adopts and where.
type ImportInput struct {
	// Instance is the declared instance that adopts the creation; its
	// request must be wholly known.
	Instance *config.Instance
	// CreationID is the creation made outside genform.
	CreationID string
	Store      *statefile.Store
	Service    Service
	// ServiceID is the service identity that enters fingerprints.
	ServiceID string
	// Dir is the working directory output paths are relative to.
	Dir string
}

// ImportResult is what Import recorded.
type ImportResult struct {
	Resource *statefile.Resource
	// Warnings point out what looks unlike the declaration; the import
	// went ahead regardless.
	Warnings []string
}

// Import adopts a creation made elsewhere (on the service's site, by a
// script, or by an apply whose answer was lost) as the declared instance
// in.Instance: it checks the creation succeeded, fetches its detail,
// downloads its outputs into the instance's directory as apply would, and
// records it with the declaration's request and fingerprint, so that the
// next plan finds nothing to do. An intent left at the address by an
// interrupted apply is cleared: the imported creation takes its place.
//
// It refuses an instance the state already manages, a request that is not
// known yet, and a creation that has not succeeded or is of the other kind.
// When the creation is recorded but some download failed, it returns the
// result together with an error; the next apply downloads what is missing
// and generates nothing.
func Import(ctx context.Context, in ImportInput) (*ImportResult, error) {
	inst, id := in.Instance, in.CreationID
	if id == "" {
		return nil, errors.New("importing: no creation id")
	}
	old, err := in.Store.Resource(inst.Addr)
	if err != nil {
		return nil, fmt.Errorf("reading the state of %s: %w", inst.Addr, err)
	}
	if old != nil {
		return nil, fmt.Errorf("%s is already managed (creation %s); to adopt another creation, forget it first with: genform state rm %s", inst.Addr, old.CreationID, shellAddr(inst.Addr))
	}
	if inst.Request == nil {
		return nil, fmt.Errorf("the request of %s depends on values known only after apply, so the creation cannot be matched to it; apply what it references first", inst.Addr)
	}

	st, err := in.Service.Status(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("fetching the status of creation %s: %w", id, err)
	}
	switch st.State {
	case service.StateDone:
	case service.StateFailed:
		return nil, fmt.Errorf("creation %s failed on the service: there are no outputs to import", id)
	default:
		return nil, fmt.Errorf("creation %s is %s, not succeed: wait for it to finish, then import it again", id, quoteStatus(st.Raw))
	}
	det, err := in.Service.Detail(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("fetching the detail of creation %s: %w", id, err)
	}
	kind := inst.Resource.Kind
	if t := det.OutputType; (t == string(config.KindImage) || t == string(config.KindVideo)) && t != string(kind) {
		return nil, fmt.Errorf("creation %s is %s %s, but %s is declared as %s %s", id, article(t), t, inst.Addr, article(string(kind)), kind)
	}
	outs := outputsOf(kind, det)
	if len(outs) == 0 {
		return nil, fmt.Errorf("the service lists no outputs for creation %s", id)
	}

	res := &ImportResult{Warnings: importWarnings(inst, det, len(outs))}
	if snap, err := in.Store.Snapshot(); err == nil {
		for _, addr := range sortedKeys(snap.Resources) {
			if snap.Resources[addr].CreationID == id {
				res.Warnings = append(res.Warnings, fmt.Sprintf("creation %s is also recorded for %s; both now hold copies of its files", id, addr))
			}
		}
		if it := snap.Intents[inst.Addr]; it != nil && it.GenerationID != "" && it.GenerationID != id {
			res.Warnings = append(res.Warnings, fmt.Sprintf("job %s, submitted for %s by an interrupted apply, is abandoned: the imported creation takes its place", it.GenerationID, inst.Addr))
		}
	}

	rec := &statefile.Resource{
		Addr:          inst.Addr,
		Kind:          string(kind),
		Endpoint:      inst.Endpoint,
		Fingerprint:   config.Fingerprint(in.ServiceID, inst.Endpoint, inst.Request),
		Request:       inst.Request,
		GenerationID:  id,
		CreationID:    id,
		Status:        StatusSucceed,
		Detail:        det.Raw,
		Outputs:       outs,
		Dir:           inst.Dir,
		WatermarkFree: inst.WatermarkFree,
		Deps:          inst.Resource.Refs,
	}
	if det.CreationID != "" {
		rec.CreationID = det.CreationID
	}
	r := &applyRun{e: &Engine{Service: in.Service, Dir: in.Dir}, ctx: ctx}
	dlErr := r.downloadAll(rec, nil)
	if dlErr != nil && ctx.Err() != nil {
		// Interrupted: record nothing, so the import can simply be run
		// again.
		return nil, ctx.Err()
	}
	// Recorded whatever the downloads did, as apply does: the creation is
	// adopted, and a failed download is retried by the next apply.
	err = in.Store.Update(func(tx *statefile.Tx) error {
		cur, err := tx.Resource(inst.Addr)
		if err != nil {
			return err
		}
		if cur != nil {
			return fmt.Errorf("%s was recorded while importing it", inst.Addr)
		}
		if err := tx.PutResource(rec); err != nil {
			return err
		}
		if err := tx.SetProtected(inst.Addr, inst.Resource.PreventDestroy); err != nil {
			return err
		}
		return tx.DeleteIntent(inst.Addr)
	})
	if err != nil {
		return nil, fmt.Errorf("recording %s (creation %s): %w", inst.Addr, id, err)
	}
	res.Resource = rec
	if dlErr != nil {
		return res, fmt.Errorf("%w; the creation is recorded for %s, run 'genform apply' to download the rest (nothing is generated)", dlErr, inst.Addr)
	}
	return res, nil
}

// importWarnings compares what the service says about a creation with the
// declaration it is imported for. The service's detail does not echo every
// request field, so only what it does echo is compared.
func importWarnings(inst *config.Instance, det *service.Creation, files int) []string {
	var warns []string
	if v, ok := inst.Attrs["prompt"]; ok && v.IsKnown() && !v.IsNull() && v.Type() == cty.String {
		if want := v.AsString(); det.Prompt != "" && det.Prompt != want {
			warns = append(warns, fmt.Sprintf("the creation's prompt is %q, but %s declares %q; the next plan will not show this difference, because the declaration is recorded as its request", det.Prompt, inst.Addr, want))
		}
	}
	if inst.Resource.Kind == config.KindImage {
		if want := mediaCount(inst); want != files {
			warns = append(warns, fmt.Sprintf("the creation has %d image%s, but %s declares image_number = %d", files, pluralS(files), inst.Addr, want))
		}
	}
	return warns
}

func quoteStatus(raw string) string {
	if raw == "" {
		return "without a status"
	}
	return fmt.Sprintf("%q", raw)
}

func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// shellAddr quotes an address for pasting into a shell when it holds an
// instance key (brackets, double quotes).
func shellAddr(addr string) string {
	if strings.ContainsAny(addr, `[]"' `) {
		return "'" + strings.ReplaceAll(addr, "'", `'\''`) + "'"
	}
	return addr
}
