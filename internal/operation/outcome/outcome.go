package outcome

import (
	"github.com/genform/genform/internal/addrs"
)

// Reference is the reference service a configuration points at, as a
// person is told of it: the built-in simulator, or a base URL and the
// setting that gave it.
type Reference struct {
	// ID is the service identity fingerprints and the state name: the
	// base URL, or "simulator" for the built-in simulator.
	ID string
	// BaseURL is "" for the built-in simulator.
	BaseURL string
	// From says where BaseURL was set: "service.base_url" or
	// "GENFORM_BASE_URL"; "" for the built-in simulator.
	From string
}

// Builtin reports whether the reference service is the built-in
// simulator.
func (r Reference) Builtin() bool { return r.BaseURL == "" }

// Provider is a live provider a command makes its generations with.
type Provider struct {
	// Name is the provider's name in the configuration ("fal").
	Name string
	// Title is how people know it ("fal.ai"); Name when genform has no
	// title for it.
	Title string
	// BaseURL is the provider block's base_url; "" when the block sets
	// none (the provider's own address).
	BaseURL string
}

// Services names the services a plan's changes (or an import) are made
// with: what the plan header's service line says.
type Services struct {
	// Reference is the reference service, when it is used (or no
	// provider is); nil otherwise.
	Reference *Reference
	// Providers are the live providers used, in the order of their first
	// change.
	Providers []Provider
}

// WarningCode says which warning an operation emitted.
type WarningCode int

// The warnings an operation goes on despite. Each names the fields of
// Warning it fills.
const (
	// SharedSimulator: the state is shared in a database (backend "pg"),
	// but the service is the built-in simulator, whose jobs and files
	// live in one working copy alone. No fields.
	SharedSimulator WarningCode = iota + 1
	// SwitchIgnored: the state was made with Recorded, the configuration
	// uses Configured, and destroy goes on, since it sends nothing to a
	// service.
	SwitchIgnored
	// SwitchImported: as SwitchIgnored, and import -migrate-service
	// imports from Configured and has the state name it.
	SwitchImported
	// SwitchMigrated: as SwitchIgnored, and plan or apply
	// -migrate-service generates anew on Configured what was made with
	// Recorded.
	SwitchMigrated
)

// Warning is something an operation goes on despite, as data: the views
// say it in words.
type Warning struct {
	Code WarningCode
	// Recorded is the service identity the state names.
	Recorded string
	// Configured is the reference service the configuration points at.
	Configured Reference
}

// Transfer is what pull or push did.
type Transfer struct {
	// Moved counts the files fetched (pull) or uploaded (push), Bytes
	// their size; Present counts those already in place (pull: the file
	// on disk is the recorded one; push: the store holds it).
	Moved, Present int
	Bytes          int64
	// Failed are the files that were not moved, in address order.
	Failed []TransferFailure
}

// TransferFailure is a file pull or push did not move.
type TransferFailure struct {
	Addr addrs.Instance
	Path string
	// Generation is, for a file of a generation in the history (push),
	// its id; "" for a recorded instance's file.
	Generation string
	// Object is the store's object the file is (or would be) kept as;
	// "" for a failure of no one file (an interruption).
	Object string
	Err    error
}

// Forgotten is an instance state rm removed.
type Forgotten struct {
	Addr addrs.Instance
	// AbandonedJob is the job an interrupted apply submitted for it,
	// which nothing follows any more; "" when there was none.
	AbandonedJob string
}

// Moved is one instance state mv moved.
type Moved struct {
	Src, Dst addrs.Instance
	// Files is how many files moved from FromDir to ToDir; 0 when they
	// stayed where they were.
	Files          int
	FromDir, ToDir string
}

// WorkspaceDeleted is what genform workspace delete did.
type WorkspaceDeleted struct {
	Name string
	// Managed are the instances whose files the workspace recorded
	// (left on disk, no longer managed by it): only with -force.
	Managed []addrs.Instance
	// Abandoned are the instances whose submissions an interrupted apply
	// left in the workspace, no longer followed: only with -force.
	Abandoned []addrs.Instance
	// Kept is how many generations of the workspace's history were filed
	// in the default workspace's, which did not hold them, to stay
	// restorable.
	Kept int
}
