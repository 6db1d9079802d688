package plans

import (
	"fmt"
	"sync/atomic"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
)

// Plan is the set of changes that would make the files and the state match
// the configuration. It is the model the planner makes and the engine
// carries out, not a file format: the public JSON document and the saved
// plan file are the views' encodings of it.
type Plan struct {
	// Service identifies the service the fingerprints were computed for:
	// the base URL, or config.SimulatorService.
	Service string
	// Lineage and Serial are the state's when the plan was made; applying
	// a saved plan to a state that moved on since is refused.
	Lineage string
	Serial  uint64
	// ConfigHash is the configuration's hash (files and the values of
	// non-sensitive variables).
	ConfigHash string
	// Targets and Replace are the -target and -replace addresses the plan
	// was made with. An address without a key also names every instance
	// of its resource.
	Targets, Replace []addrs.Instance
	// Changes are in dependency order, no-ops included.
	Changes []*Change
	// Prices are the service's prices the plan's cost is estimated at;
	// nil when the configuration sets none.
	Prices *config.Prices

	// unit is what the plan's estimate is made in, found once.
	unit atomic.Pointer[unit]
}

// Change is what the plan does to one resource instance, and why.
//
// A plan holds one for every instance, no-ops included, so its one-byte
// fields (Action, MediaDefault, AtMost, Store) sit side by side in one
// word: each in a word of its own made a Change 328 bytes, which Go
// allocates as 352 (TestChangeSize).
type Change struct {
	Addr addrs.Instance
	// PrevAddr is where a move comes from; the zero Instance otherwise.
	PrevAddr addrs.Instance
	Action   Action
	// MediaDefault is true when Media is the service's (or the model's)
	// default count of images, which a block that sets no image_number
	// pays for (MediaDefault).
	MediaDefault bool
	// AtMost is true when Media or Seconds depends on a value known only
	// after apply and is the most the service allows: the change's cost
	// is an upper bound.
	AtMost bool
	// Store says how much of the recorded generation's bytes the object
	// store holds, as the state recorded at upload; StoreUnknown when no
	// store is configured or nothing is recorded.
	Store StoreState
	// Model is the live provider's model that makes the instance's
	// generations (the declared one, or for a delete the recorded one),
	// with its prices; nil for the reference service's (kept small: most
	// changes of a large plan are its no-ops).
	Model *Model
	// Reason says why; nil for a no-op, which needs no reason (and, being
	// most changes of a large plan, is kept small).
	Reason *Reason
	// Attrs lists the attributes that differ (all of them for a create),
	// for explaining the change.
	Attrs []AttrChange
	// Before and After are the user-facing attributes of the recorded and
	// the declared instance, as JSON-shaped values (config.JSONValue);
	// values known only after apply are absent from After and listed in
	// AfterUnknown.
	Before       map[string]any
	After        map[string]any
	AfterUnknown []string
	// Fingerprint is the declared request's fingerprint, "" while it
	// depends on values known only after apply.
	Fingerprint string
	// Media is how many files one generation of this instance yields.
	Media int
	// Seconds is how long a video is (its duration, or the service's
	// default), for estimating its cost; 0 for an image.
	Seconds int
	// Uncounted is a count field of a live provider's input whose value
	// the plan cannot count (InputCount), taken as 1 in Media: the
	// change's cost is then a lower bound, which -max-cost refuses to
	// check against. nil when Media counts everything.
	Uncounted *Uncounted
	// Dir is where the instance's files go.
	Dir string
	// GenerationID is the job a resume polls.
	GenerationID string
	// Redownload lists the output indexes an update fetches again.
	Redownload []int
	// Sensitive names the attributes whose declared values derive from a
	// sensitive variable; the views never show their values, before or
	// after.
	Sensitive []string
}

// Model is a live provider's model a change is made with.
type Model struct {
	// Endpoint names the provider and the model.
	Endpoint addrs.Endpoint
	// Prices are the model's prices, nil when none are set; a change the
	// reference service makes is priced at the plan's Prices.
	Prices *config.Prices
	// Width and Height are the size in pixels of each image (or video
	// frame) a generation makes, as the model's tables read it from its
	// request, for the prices that follow it (config.Prices.Megapixel,
	// VideoSecondAt); 0 when they cannot tell, or the change makes no
	// generation.
	Width, Height int
}

// ModelOf is the Model of ep, nil for a reference service endpoint.
func ModelOf(ep addrs.Endpoint, prices *config.Prices) *Model {
	if ep.Provider() == addrs.Reference {
		return nil
	}
	return &Model{Endpoint: ep, Prices: prices}
}

// Provider is the live provider that makes the change, "" for the
// reference service.
func (c *Change) Provider() string {
	if c.Model == nil {
		return ""
	}
	return c.Model.Endpoint.Provider()
}

// Kind is the change's resource kind.
func (c *Change) Kind() addrs.Kind { return c.Addr.Resource.Kind }

// AttrChange is one attribute's old and new value; Unknown is true when
// the new value is known only after apply.
type AttrChange struct {
	Name          string
	Before, After any
	Unknown       bool
}

// StoreState is how much of an instance's files the object store holds.
type StoreState uint8

// The store states of an instance.
const (
	StoreUnknown StoreState = iota // no store configured, or no files recorded
	StoreNone                      // the store holds none of its files
	StoreSome                      // the store holds some of its files
	StoreAll                       // the store holds every one of its files
)

var storeNames = [...]string{StoreUnknown: "", StoreNone: "none", StoreSome: "some", StoreAll: "all"}

// String is the state's name in the plan document: "all", "some",
// "none", or "" when unknown.
func (s StoreState) String() string {
	if int(s) < len(storeNames) {
		return storeNames[s]
	}
	return ""
}

// ParseStoreState reads a store state's name.
func ParseStoreState(s string) (StoreState, error) {
	for i, n := range storeNames {
		if n == s {
			return StoreState(i), nil
		}
	}
	return 0, fmt.Errorf("unknown store state %q", s)
}

// StoreOf is how much of outs the store holds, as recorded.
func StoreOf(outs []statefile.Output) StoreState {
	if len(outs) == 0 {
		return StoreUnknown
	}
	n := 0
	for _, o := range outs {
		if o.Stored {
			n++
		}
	}
	switch n {
	case 0:
		return StoreNone
	case len(outs):
		return StoreAll
	}
	return StoreSome
}

// Summary counts a plan's changes.
type Summary struct {
	Generate, Images, Videos, Redownload, Upload, Move, Resume, Restore, Delete, NoOp int
	// PossiblyPaid counts the no-ops that wait for the user's decision
	// (Change.PossiblyPaid); NoOp counts them too.
	PossiblyPaid int
	// Refused counts the no-ops whose request the provider refused for
	// its content (Change.Refused); NoOp counts them too.
	Refused int
}

// Summary counts the plan's changes.
func (p *Plan) Summary() Summary {
	var s Summary
	for _, c := range p.Changes {
		switch c.Action {
		case Create, Replace:
			s.Generate++
			if c.Kind() == addrs.Image {
				s.Images += c.Media
			} else {
				s.Videos += c.Media
			}
		case Update:
			// Files that only change directory are moved, not fetched;
			// files the store lacks are uploaded.
			if c.MovesOnly() {
				s.Move++
			} else if c.UploadsOnly() {
				s.Upload++
			} else {
				s.Redownload++
			}
		case Move:
			s.Move++
		case Resume:
			s.Resume++
		case Restore:
			s.Restore++
		case Delete:
			s.Delete++
		default:
			s.NoOp++
			if c.PossiblyPaid() {
				s.PossiblyPaid++
			}
			if c.Refused() {
				s.Refused++
			}
		}
	}
	return s
}

// PossiblyPaid reports whether the change leaves alone an instance whose
// create request an earlier apply sent without learning its outcome (the
// answer was lost, or ambiguous): the service may have made, and charged
// for, the job, so nothing is sent for it until the user decides to adopt
// the creation (import) or to pay again (-replace).
func (c *Change) PossiblyPaid() bool {
	return c.Action == NoOp && c.Reason != nil && c.Reason.Code == ReasonAnswerLost
}

// Refused reports whether the change leaves alone an instance whose
// declared request the provider refused for its content: it waits for
// the request to change.
func (c *Change) Refused() bool {
	return c.Action == NoOp && c.Reason != nil && c.Reason.Code == ReasonRefused
}

// Waiting lists the no-ops a user must act on, possibly paid or refused,
// in the plan's order.
func (p *Plan) Waiting() []*Change {
	var out []*Change
	for _, c := range p.Changes {
		if c.PossiblyPaid() || c.Refused() {
			out = append(out, c)
		}
	}
	return out
}

// PossiblyPaid lists the changes that wait for the user's decision
// (Change.PossiblyPaid), in the plan's order.
func (p *Plan) PossiblyPaid() []*Change {
	var out []*Change
	for _, c := range p.Changes {
		if c.PossiblyPaid() {
			out = append(out, c)
		}
	}
	return out
}

// MovesOnly reports whether the change is an update whose files only move
// to another directory (dir or output_dir changed): nothing is downloaded.
func (c *Change) MovesOnly() bool { return c.onlyLocal(DirMoved, OutputUnstored) }

// UploadsOnly reports whether the change is an update that fetches
// nothing and uploads files the object store lacks (and may move files
// and record a protection).
func (c *Change) UploadsOnly() bool { return c.onlyLocal(OutputUnstored, 0) }

// onlyLocal reports whether the change is an update that does what at
// least once, does not do not, and fetches no file.
func (c *Change) onlyLocal(what, not LocalWhat) bool {
	if c.Action != Update || c.Reason == nil {
		return false
	}
	found := false
	for _, l := range c.Reason.Local {
		switch l.What {
		case what:
			found = true
		case not, WatermarkChanged, OutputMissing, OutputModified:
			return false
		}
	}
	return found
}

// HasChanges reports whether applying the plan would do anything.
func (p *Plan) HasChanges() bool {
	for _, c := range p.Changes {
		if c.Action != NoOp {
			return true
		}
	}
	return false
}

// Generations is the number of paid generations applying would submit.
func (p *Plan) Generations() int {
	n := 0
	for _, c := range p.Changes {
		if c.Action.Generates() {
			n++
		}
	}
	return n
}

// Change returns the change of addr, or nil.
func (p *Plan) Change(addr addrs.Instance) *Change {
	for _, c := range p.Changes {
		if c.Addr == addr {
			return c
		}
	}
	return nil
}
