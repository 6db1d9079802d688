package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/blobstore"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/reconcile/plans"
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
	// Service is the provider that makes the instance's generations: the
	// reference service, or the live provider its endpoint names.
	Service provider.Provider
	// ServiceID is the reference service's identity, which enters the
	// fingerprints of its endpoints.
	ServiceID string
	// Dir is the working directory output paths are relative to.
	Dir string
	// Blobs, when set, is the object store the outputs are uploaded to
	// once the creation is recorded, as apply uploads a generation's.
	Blobs *blobstore.Bucket
}

// ImportResult is what Import recorded.
type ImportResult struct {
	Resource *statefile.Resource
	// Unstored are the files the object store did not take; the record
	// and the files are kept, and the next apply uploads them.
	Unstored []Unstored
	// Warnings point out what looks unlike the declaration; the import
	// went ahead regardless.
	Warnings []ImportWarning
}

// ImportWarningKind is a kind of ImportWarning.
type ImportWarningKind uint8

// The things Import warns about.
const (
	// PromptDiffers: the creation's prompt Got is not the declared Want;
	// the plan will not show it, since the declaration becomes the record.
	PromptDiffers ImportWarningKind = iota + 1
	// ImageCountDiffers: the creation has GotN images, the declaration
	// asks for WantN.
	ImageCountDiffers
	// AlsoRecorded: the creation is also recorded for Other.
	AlsoRecorded
	// JobAbandoned: the job GenerationID an interrupted apply submitted
	// for the address is no longer followed.
	JobAbandoned
)

// ImportWarning is one thing about an imported creation that looks unlike
// the declaration.
type ImportWarning struct {
	Kind         ImportWarningKind
	Got, Want    string
	GotN, WantN  int
	Other        addrs.Instance
	GenerationID string
}

// Import adopts a creation made elsewhere (on the service's site, by a
// script, or by an apply whose answer was lost) as the declared instance
// in.Instance: it checks the creation succeeded, fetches its detail,
// downloads its outputs into the instance's directory as apply would, and
// records it with the declaration's request and fingerprint, so that the
// next plan finds nothing to do; with an object store (in.Blobs), it then
// uploads them. An intent left at the address by an
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
		return nil, fmt.Errorf("%s is already managed (creation %s); to adopt another creation, forget it first with: genform state rm %s", inst.Addr, old.CreationID, inst.Addr.Shell())
	}
	if inst.Request == nil {
		return nil, fmt.Errorf("the request of %s depends on values known only after apply, so the creation cannot be matched to it; apply what it references first", inst.Addr)
	}

	job := provider.Job{ID: id, Kind: inst.Resource.Kind, Target: inst.Endpoint.Target()}
	st, err := in.Service.Status(ctx, job)
	if err != nil {
		return nil, fmt.Errorf("fetching the status of creation %s: %w", id, err)
	}
	switch st.State {
	case provider.Done:
	case provider.Failed:
		return nil, fmt.Errorf("creation %s failed on the service: there are no outputs to import", id)
	default:
		return nil, fmt.Errorf("creation %s is %s, not succeed: wait for it to finish, then import it again", id, quoteStatus(st.Raw))
	}
	det, err := in.Service.Result(ctx, job)
	if err != nil {
		return nil, fmt.Errorf("fetching the detail of creation %s: %w", id, err)
	}
	kind := inst.Resource.Kind
	if t := det.Kind; t != 0 && t != kind {
		return nil, fmt.Errorf("creation %s is %s %s, but %s is declared as %s %s", id, article(t.String()), t, inst.Addr, article(kind.String()), kind)
	}
	outs := outputsOf(det)
	if len(outs) == 0 {
		return nil, fmt.Errorf("the service lists no outputs for creation %s", id)
	}

	res := &ImportResult{Warnings: importWarnings(inst, det, len(outs))}
	if snap, err := in.Store.Snapshot(); err == nil {
		for _, addr := range addrs.SortedKeys(snap.Resources) {
			if snap.Resources[addr].CreationID == id {
				res.Warnings = append(res.Warnings, ImportWarning{Kind: AlsoRecorded, Other: addr})
			}
		}
		if it := snap.Intents[inst.Addr]; it != nil && it.GenerationID != "" && it.GenerationID != id {
			res.Warnings = append(res.Warnings, ImportWarning{Kind: JobAbandoned, GenerationID: it.GenerationID})
		}
	}

	rec := &statefile.Resource{
		Addr:          inst.Addr,
		Endpoint:      inst.Endpoint,
		Fingerprint:   inst.Fingerprint(in.ServiceID),
		Request:       inst.Request,
		GenerationID:  id,
		CreationID:    id,
		Status:        plans.StatusSucceed,
		Detail:        det.Detail,
		Version:       det.Version,
		Usage:         det.Usage,
		Outputs:       outs,
		Dir:           inst.Dir,
		WatermarkFree: inst.WatermarkFree,
		Deps:          inst.Resource.Refs,
	}
	if det.CreationID != "" {
		rec.CreationID = det.CreationID
	}
	// The outputs are downloaded as apply downloads a generation's, by a
	// run of the engine that submits nothing.
	eng := &Engine{Store: in.Store, Providers: map[string]provider.Provider{inst.Endpoint.Provider(): in.Service},
		ServiceID: in.ServiceID, Dir: in.Dir, Blobs: in.Blobs}
	r := eng.start(ctx, nil)
	defer r.stop(nil)
	dlErr := r.downloadAll(r.on(inst.Addr), rec, nil, nil)
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
		if err := tx.Record(rec); err != nil {
			return err
		}
		return tx.Protect(inst.Addr, inst.Resource.PreventDestroy)
	})
	if err != nil {
		return nil, fmt.Errorf("recording %s (creation %s): %w", inst.Addr, id, err)
	}
	r.upload(inst.Addr, rec)
	res.Resource, res.Unstored = rec, r.res.Unstored
	if dlErr != nil {
		return res, fmt.Errorf("%w; the creation is recorded for %s, run 'genform apply' to download the rest (nothing is generated)", dlErr, inst.Addr)
	}
	return res, nil
}

// importWarnings compares what the service says about a creation with the
// declaration it is imported for. The service's detail does not echo every
// request field, so only what it does echo is compared.
func importWarnings(inst *config.Instance, det *provider.Result, files int) []ImportWarning {
	var warns []ImportWarning
	if v, ok := inst.Attr("prompt"); ok && v.IsKnown() && !v.IsNull() && v.Type() == cty.String {
		if want := v.AsString(); det.Prompt != "" && det.Prompt != want {
			warns = append(warns, ImportWarning{Kind: PromptDiffers, Got: det.Prompt, Want: want})
		}
	}
	if inst.Resource.Kind == addrs.Image {
		if want := plans.MediaCount(inst); want != files {
			warns = append(warns, ImportWarning{Kind: ImageCountDiffers, GotN: files, WantN: want})
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
