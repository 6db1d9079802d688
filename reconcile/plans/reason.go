package plans

import (
	"fmt"
	"time"

	"github.com/genform/genform/internal/addrs"
)

// ReasonCode says why a change is planned. Each action has its own codes;
// the fields of Reason that a code uses are listed with it. Reasons are for
// explaining a plan, never for deciding one.
type ReasonCode uint8

// The reason codes.
const (
	ReasonNone ReasonCode = iota

	// Create.
	ReasonNew        // not in the state: not generated yet
	ReasonAnswerLost // an apply sent the create request at Since and did not learn its outcome: it may have been paid for, so it is a no-op until -replace
	ReasonAbandoned  // the request changed since an interrupted apply submitted job GenerationID, which is abandoned (it may have been paid for)

	// Replace (ReasonAnswerLost and ReasonAbandoned too, when the state
	// holds an earlier generation).
	ReasonFailed       // the last generation failed, with Error
	ReasonRefused      // no-op: the provider refused this very request for its content (Error), so it is not sent again
	ReasonForced       // -replace asked for it
	ReasonChanged      // the request attributes Attrs changed
	ReasonEndpoint     // the endpoint changed From one To another
	ReasonRequest      // the request differs from the recorded one with no attribute changed: the service Service, or a default, changed
	ReasonUpstream     // the resources Upstream will be generated anew, and this instance is made from them
	ReasonInputUnknown // an input it refers to is not known until apply
	ReasonTriggered    // lifecycle.replace_triggered_by names the resources Upstream, which will be generated anew

	// Update.
	ReasonLocal // the local changes Local: files move, or are downloaded again

	// Move.
	ReasonRenamed // the same request left the configuration at Change.PrevAddr: a rename
	ReasonMoved   // a moved block moves the instance from Change.PrevAddr, and nothing else changes but where its files are

	// Resume.
	ReasonInterrupted // an interrupted apply submitted job GenerationID and did not finish

	// Restore.
	ReasonRestored // the history holds a generation of the declared request (job GenerationID, creation CreationID, recorded at Since for Holder) that no instance holds; Cached says whether every file is in the local cache

	// Delete.
	ReasonRemoved       // no longer in the configuration (with the job GenerationID of an interrupted replacement, if any)
	ReasonRemovedIntent // an interrupted submission (job GenerationID, or sent at Since with its answer lost) of an instance no longer in the configuration
	ReasonDestroy       // destroy asked for it (with the job GenerationID of an interrupted replacement, if any)
	ReasonDestroyIntent // destroy: an interrupted submission (job GenerationID, or sent at Since with its answer lost) is forgotten
)

var reasonNames = [...]string{
	ReasonNone:          "",
	ReasonNew:           "new",
	ReasonAnswerLost:    "answer_lost",
	ReasonAbandoned:     "abandoned",
	ReasonFailed:        "failed",
	ReasonRefused:       "refused",
	ReasonForced:        "replace_requested",
	ReasonChanged:       "changed",
	ReasonEndpoint:      "endpoint_changed",
	ReasonRequest:       "request_differs",
	ReasonUpstream:      "upstream_changed",
	ReasonInputUnknown:  "input_unknown",
	ReasonTriggered:     "replace_triggered",
	ReasonLocal:         "local",
	ReasonRenamed:       "renamed",
	ReasonMoved:         "moved",
	ReasonInterrupted:   "interrupted",
	ReasonRestored:      "restored",
	ReasonRemoved:       "removed",
	ReasonRemovedIntent: "removed_intent",
	ReasonDestroy:       "destroy",
	ReasonDestroyIntent: "destroy_intent",
}

// String is the code's stable name, as the JSON documents spell it.
func (c ReasonCode) String() string {
	if int(c) < len(reasonNames) {
		return reasonNames[c]
	}
	return fmt.Sprintf("ReasonCode(%d)", uint8(c))
}

// ParseReasonCode reads a code's name.
func ParseReasonCode(s string) (ReasonCode, error) {
	for c, n := range reasonNames {
		if n == s {
			return ReasonCode(c), nil
		}
	}
	return 0, fmt.Errorf("unknown reason %q", s)
}

// MayHaveBeenPaid reports whether the reason is a submission an apply
// left behind whose job the service may have made, and charged for,
// without the state following it.
func (r Reason) MayHaveBeenPaid() bool {
	switch r.Code {
	case ReasonAnswerLost, ReasonAbandoned:
		return true
	case ReasonRemovedIntent, ReasonDestroyIntent:
		// With a job id the job exists; without one, the create request
		// was sent and its answer lost, as for ReasonAnswerLost.
		return true
	case ReasonRemoved, ReasonDestroy:
		return r.GenerationID != ""
	case ReasonLocal:
		for _, l := range r.Local {
			if l.What == IntentSettled {
				return true
			}
		}
	}
	return false
}

// KeptJob is the job of an interrupted submission that the change leaves
// undeclared (abandoned, settled, or its instance removed or destroyed):
// apply follows it to its end and keeps it in the history, because it may
// have been paid for. It is "" when there is no such job.
func (r *Reason) KeptJob() string {
	if r == nil {
		return ""
	}
	switch r.Code {
	case ReasonAbandoned, ReasonRemoved, ReasonRemovedIntent, ReasonDestroy, ReasonDestroyIntent:
		return r.GenerationID
	case ReasonLocal:
		for _, l := range r.Local {
			if l.What == IntentSettled && l.GenerationID != "" {
				return l.GenerationID
			}
		}
	}
	return ""
}

// Reason says why a change is planned: a code, and the fields the code
// uses.
type Reason struct {
	Code ReasonCode
	// Attrs are the request attributes that changed (ReasonChanged).
	Attrs []string
	// Upstream are the resources whose regeneration this one follows
	// (ReasonUpstream).
	Upstream []addrs.Resource
	// Service is the service the fingerprints are computed for, and
	// PrevService the one the state was made with when that differs
	// (ReasonRequest).
	Service, PrevService string
	// From and To are the old and new endpoints (ReasonEndpoint).
	From, To addrs.Endpoint
	// GenerationID is the job of an interrupted submission (ReasonInterrupted,
	// ReasonAbandoned, ReasonRemovedIntent, ReasonDestroyIntent, and
	// ReasonRemoved or ReasonDestroy when an interrupted replacement left
	// one beside the record), or the generation restored (ReasonRestored).
	GenerationID string
	// CreationID, Holder and Cached describe the generation restored
	// (ReasonRestored): its creation id, the instance that held it last,
	// and whether the local cache holds all of its files (otherwise they
	// are downloaded again by creation id).
	CreationID string
	Holder     addrs.Instance
	Cached     bool
	// Workspace is the workspace whose state recorded the generation
	// restored, when it is not the plan's own (ReasonRestored): a
	// generation paid for in a pull request's preview is restored on
	// main at no cost.
	Workspace string
	// Stored is true when the state records every file of the generation
	// restored in the object store, which the files the local cache lacks
	// come from (ReasonRestored).
	Stored bool
	// Since is when an interrupted apply sent its create request
	// (ReasonAnswerLost, and ReasonRemovedIntent or ReasonDestroyIntent
	// without a job), or when the generation restored was first recorded
	// (ReasonRestored).
	Since time.Time
	// Error is the failure the state recorded (ReasonFailed).
	Error string
	// Local are the local changes of an update (ReasonLocal).
	Local []LocalChange
}

// LocalWhat is a kind of local change.
type LocalWhat uint8

// The local changes an update makes.
const (
	DirMoved          LocalWhat = iota + 1 // dir changed From To: the files move
	WatermarkChanged                       // watermark_free changed: the other file is downloaded
	OutputMissing                          // output Output (at Path) is missing: downloaded again
	OutputModified                         // output Output (at Path) changed on disk: downloaded again
	ProtectionChanged                      // lifecycle.prevent_destroy is now Protect: the state records it
	IntentSettled                          // an interrupted submission for another request than the record's (job GenerationID, or sent at Since with its answer lost) is settled: nothing is generated
	OutputUnstored                         // output Output (at Path) is not in the object store: uploaded
)

var localNames = [...]string{DirMoved: "dir_moved", WatermarkChanged: "watermark_changed", OutputMissing: "output_missing", OutputModified: "output_modified", ProtectionChanged: "protection_changed", IntentSettled: "intent_settled", OutputUnstored: "output_unstored"}

// String is the local change's stable name.
func (w LocalWhat) String() string {
	if w >= DirMoved && int(w) < len(localNames) {
		return localNames[w]
	}
	return fmt.Sprintf("LocalWhat(%d)", uint8(w))
}

// ParseLocalWhat reads a local change's name.
func ParseLocalWhat(s string) (LocalWhat, error) {
	for w, n := range localNames {
		if n == s && n != "" {
			return LocalWhat(w), nil
		}
	}
	return 0, fmt.Errorf("unknown local change %q", s)
}

// LocalChange is one thing an update does.
type LocalChange struct {
	What LocalWhat
	// Output and Path name the output file (OutputMissing, OutputModified,
	// OutputUnstored).
	Output int
	Path   string
	// Stored is true when the state records the missing or changed
	// file's bytes in the object store: they are fetched from there, not
	// from the provider (OutputMissing, OutputModified).
	Stored bool
	// Cached is true when the local cache holds the missing or changed
	// file's bytes: they are taken from there first, from neither the
	// store nor the provider (OutputMissing, OutputModified).
	Cached bool
	// From and To are the old and new directory (DirMoved).
	From, To string
	// Protect is the new lifecycle.prevent_destroy (ProtectionChanged).
	Protect bool
	// GenerationID and Since are the settled submission's job, or when its
	// request was sent (IntentSettled).
	GenerationID string
	Since        time.Time
}

// ReasonCodes lists every reason code but ReasonNone, in the order they
// are declared.
func ReasonCodes() []ReasonCode {
	codes := make([]ReasonCode, 0, len(reasonNames)-1)
	for c := ReasonNone + 1; int(c) < len(reasonNames); c++ {
		codes = append(codes, c)
	}
	return codes
}

// LocalWhats lists every kind of local change, in the order they are
// declared.
func LocalWhats() []LocalWhat {
	var whats []LocalWhat
	for w := DirMoved; int(w) < len(localNames); w++ {
		whats = append(whats, w)
	}
	return whats
}
