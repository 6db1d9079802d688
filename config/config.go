package config

import (
	"hash"
	"slices"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
)

// Options are the values a command line adds to a configuration.
type Options struct {
	// Vars are the -var 'NAME=VALUE' arguments in command-line order. A value
	// for a variable whose type is not a primitive (list, map, object, any) is
	// parsed as an HCL expression, as Terraform does; otherwise it is taken
	// as a literal string and converted to the variable's type.
	Vars []string
	// VarFiles are the -var-file paths (*.genvars.hcl, or HCL JSON when the
	// name ends in .json), relative to the working directory, in order.
	VarFiles []string
	// Environ is the process environment as KEY=VALUE pairs (os.Environ()).
	// GENFORM_VAR_<name> entries set variables, and env() reads from it.
	Environ []string
	// UnknownUnset makes a variable given no value (no default, no
	// GENFORM_VAR_<name>, var file or -var) an unknown value of its type
	// rather than an error, as Terraform's validate does: validate checks
	// the configuration for whatever value such a variable will be given,
	// and init needs only where the state is kept (see UnlocatedState).
	// A value that is given is checked against the variable's type and
	// validation blocks all the same. Plan and apply leave it false: they
	// need every value.
	UnknownUnset bool
	// Providers is what the configuration knows of the providers genform
	// speaks; the language itself names none. Required: a configuration
	// loaded without it takes no block (every one is made by a provider).
	Providers Providers
	// Today is the day model lifecycles are checked against: validate
	// refuses a model shut down by then, plan warns of a shutdown within
	// ShutdownWarningDays of it. Zero: GENFORM_TODAY's day when Environ
	// sets it (tests, or a look at another day), else today's in UTC.
	Today time.Time
}

// Providers is what the configuration asks of the providers genform
// speaks, which the caller hands in (Options.Providers): the names a
// provider block and provider = NAME may give and what each one's models
// take (schema.Provider), and what the reference service, which makes
// the blocks that name no provider, takes at each of its endpoints
// (schema.Endpoint). Checks and request bodies follow them; the
// configuration adds the language's positions and words.
type Providers interface {
	// Live is the live provider named name; nil when genform speaks none
	// of that name.
	Live(name string) *schema.Provider
	// LiveNames lists the live providers' names, sorted.
	LiveNames() []string
	// Endpoint is what the reference service's endpoint ep takes.
	Endpoint(ep addrs.Endpoint) *schema.Endpoint
}

// Default settings, filled in when the genform and service blocks leave
// them out.
const (
	DefaultStateFile         = ".genform/state.db"
	DefaultOutputDir         = "generated"
	DefaultCacheDir          = ".genform/cache"
	DefaultCacheMaxSize      = 5 << 30
	DefaultParallelism       = 10
	DefaultRequestsPerMinute = 450
	DefaultPollInterval      = 5 * time.Second
	DefaultTimeout           = 30 * time.Minute
)

// Config is one working directory's configuration, decoded and checked.
type Config struct {
	// Dir is the working directory as given to Load.
	Dir string
	// Files holds every file parsed, keyed by the name diagnostics use, so
	// that hcl.NewDiagnosticTextWriter can print source snippets.
	Files map[string]*hcl.File
	// Settings is the genform block with defaults filled in.
	Settings Settings
	// Service is the service block with defaults filled in.
	Service Service
	// Providers are the provider blocks, by name.
	Providers map[string]*Provider
	// providers is what it knows of the providers genform speaks, and ref
	// the specs of the reference service's endpoints made from it.
	providers Providers
	ref       *refSpecs
	// Variables are the declared input variables with their effective values.
	Variables map[string]*Variable
	// Locals are the local values, by name.
	Locals map[string]*Local
	// Resources are in dependency order: every resource comes after the
	// resources it refers to; ties keep declaration order (file lexical
	// order, then position in the file).
	Resources []*Resource
	// Outputs are the output blocks in declaration order.
	Outputs []*Output
	// Moved are the moved blocks in declaration order, those Load found
	// sound (see checkMoved).
	Moved []*Moved
	// Hash is a hex sha256 of the configuration files (names and bytes) and
	// the effective values of the variables that are not Secret. A saved plan
	// records it so that applying the plan after the configuration changed
	// can be refused. Values read with env() or file() are not part of it.
	Hash string

	// module is the module instance this Config is (the root module's is
	// the zero Module), modDir its folder relative to the working
	// directory ("" for the root module), parent the Config of the module
	// that calls it (nil for the root module), depth how deep it nests,
	// dirParts the folders its resources' default directories add under
	// output_dir, moduleCall and moduleKey the call and the key it is the
	// instance of, inputs the call's arguments (nil for the root module),
	// and pathObj the path object.
	module     addrs.Module
	modDir     string
	parent     *Config
	depth      int
	dirParts   []string
	moduleCall *ModuleCall
	moduleKey  addrs.Key
	inputs     map[string]*moduleInput
	pathObj    cty.Value
	// calls are the module blocks, by name, and callOrder their names in
	// declaration order; modFiles the parsed files of every module folder
	// loaded (the root module's Config keeps them), and modHash what
	// Hash adds their bytes to.
	calls map[string]*ModuleCall
	// unknownUnset is Options.UnknownUnset.
	unknownUnset bool
	callOrder    []string
	modFiles     map[string][]hcl.Body
	modHash      hash.Hash
	// moved are the moved blocks this module and those it calls declare,
	// addressed from the root module, for the root to check.
	moved []*Moved

	early     *earlyDecoder // resource blocks decoded as Load parsed them, until decode takes them
	absDir    string        // Dir made absolute, symlinks resolved, for file functions
	byAddr    map[addrs.Resource]*Resource
	movedBy   map[addrs.Resource][]*Moved // c.Moved by the resource each moves from
	movedMods []*Moved                    // c.Moved that move a module
	environ   map[string]string
	funcs     map[string]function.Function
	varObj    cty.Value        // object of every variable's value, for var.*
	baseCtx   *hcl.EvalContext // var.* and the functions: the context of what refers to no local or resource
	staticLoc cty.Value        // object of every local value known without resources
	localList []*Local         // locals in evaluation (dependency) order
	// referenced holds the resource-level addresses some resource, local
	// or output refers to directly.
	referenced map[addrs.Resource]bool
	// tokenVars are the variables the service token or the pg backend's
	// conn_str refers to.
	tokenVars []string
	// unsetSettings are the settings left at their defaults because they
	// are made from a variable given no value (Options.UnknownUnset).
	unsetSettings []unsetSetting
	// imageWarnings are the warnings of ImageNumberWarnings.
	imageWarnings hcl.Diagnostics
	// today is the day model lifecycles are checked against (Today), and
	// models the models the blocks use, for ModelDiagnostics.
	today  time.Time
	models []modelUse
}

// Secret reports whether the value of the variable name must never be
// written anywhere, a saved plan included: it is declared sensitive, or
// the service's token or the pg backend's connection string is made from
// it.
func (c *Config) Secret(name string) bool {
	if v := c.Variables[name]; v != nil && v.Sensitive {
		return true
	}
	return slices.Contains(c.tokenVars, name)
}

// Settings is the genform block.
type Settings struct {
	// StateFile is the bbolt state file, relative to the working directory.
	// A Backend replaces it.
	StateFile string
	// Backend is where the state is kept instead of StateFile; nil for
	// the state file.
	Backend *Backend
	// Store is the object store the outputs' bytes are kept in; nil when
	// none is configured.
	Store *ObjectStore
	// OutputDir is where resources without a dir write their files.
	OutputDir string
	// CacheDir is where the files of generations a change removed or
	// overwrote are kept by their sha256, relative to the working
	// directory; never inside OutputDir, nor OutputDir inside it.
	CacheDir string
	// CacheMaxSize is the budget the cache is pruned to after an apply, in
	// bytes.
	CacheMaxSize int64
	// Restore is whether a request found in the history is restored
	// (no generation) rather than generated anew.
	Restore bool
	// WorkspaceMaxCost bounds what each workspace but default may spend
	// in all, in the currency of the plan's prices: an apply that would
	// take a workspace's recorded spend past it is refused. nil when the
	// configuration sets none.
	WorkspaceMaxCost *Money
	// DeclRange is the block's header, or an empty range when the block is
	// absent.
	DeclRange hcl.Range
}

// Service is the service block: where generations are sent and how hard.
type Service struct {
	// BaseURL is "" when the configuration does not set it; the caller then
	// reads GENFORM_BASE_URL, and failing that starts the built-in simulator.
	// It is an http or https URL without a trailing slash, so that
	// "https://x/" and "https://x" are one service in fingerprints.
	BaseURL string
	// Token is "" when the configuration does not set it; the caller then
	// reads GENFORM_TOKEN. It is never part of a fingerprint, a hash or a
	// diagnostic.
	Token string
	// Parallelism is how many generations may be in flight at once.
	Parallelism int
	// RequestsPerMinute is the one request budget every request draws from.
	RequestsPerMinute int
	// PollInterval is the longest wait between two status polls of a job.
	PollInterval time.Duration
	// Timeout is how long one generation may take before it is left
	// resumable.
	Timeout time.Duration
	// Prices are what the service charges, for estimating a plan's cost;
	// nil when the configuration sets none.
	Prices *Prices
	// MaxDownloadSize is the largest output file downloaded, in bytes; 0
	// when the configuration does not set it (the client's default).
	MaxDownloadSize int64
	// DeclRange is the block's header, or an empty range when it is absent.
	DeclRange hcl.Range
}

// Variable is an input variable block and the value it settled on.
type Variable struct {
	Name        string
	Description string
	// Type is the declared type constraint; cty.DynamicPseudoType when the
	// block has none.
	Type cty.Type
	// Default is cty.NilVal when the block has no default.
	Default   cty.Value
	Sensitive bool
	// Value is the effective value: default < GENFORM_VAR_<name> <
	// -var-file < -var, converted to Type.
	Value       cty.Value
	Validations []*VariableValidation
	DeclRange   hcl.Range

	literal   bool      // -var and environment values are literal strings, not expressions
	valueExpr hcl.Range // where Value came from, for validation failures
	hasValue  bool
}

// VariableValidation is one validation block of a variable.
type VariableValidation struct {
	Condition    hcl.Expression
	ErrorMessage hcl.Expression
	DeclRange    hcl.Range
}

// Local is one entry of a locals block.
type Local struct {
	Name      string
	Expr      hcl.Expression
	DeclRange hcl.Range
	// Refs are the resource-level addresses the local refers to, directly or
	// through other locals or a module's outputs, sorted.
	Refs []addrs.Resource

	calls   []string         // module calls it refers to directly
	locals  []string         // locals it refers to directly
	direct  []addrs.Resource // resources it refers to directly
	static  bool             // evaluated once at Load: refers to no resource, even indirectly
	value   cty.Value
	checked bool // its references were valid
}

// Output is an output block.
type Output struct {
	Name        string
	Description string
	Sensitive   bool
	Expr        hcl.Expression
	// Refs are the resource-level addresses the value refers to, directly or
	// through locals, sorted.
	Refs      []addrs.Resource
	DeclRange hcl.Range

	direct    []addrs.Resource
	locals    []string
	calls     []string
	dependsOn []addrs.Resource
	ok        bool
}

// Graph returns, for each resource-level address, the addresses of the
// resources it depends on (its Refs). Cycles are reported by Load.
func (c *Config) Graph() map[addrs.Resource][]addrs.Resource {
	g := make(map[addrs.Resource][]addrs.Resource, len(c.Resources))
	for _, r := range c.Resources {
		g[r.Addr()] = r.Refs
	}
	return g
}

// Referenced reports whether a resource, local or output refers to the
// resource with the resource-level address addr. Only such resources need
// a value in a Scope: a planner can skip building the values of the
// others, which for a large configuration are most of them.
func (c *Config) Referenced(addr addrs.Resource) bool { return c.referenced[addr] }

// Resource returns the resource with the address addr, or nil.
func (c *Config) Resource(addr addrs.Resource) *Resource {
	return c.byAddr[addr]
}

// markSensitive marks the values of sensitive variables, and through cty
// and HCL every value computed from one.
const markSensitive = valueMark("sensitive")

type valueMark string
