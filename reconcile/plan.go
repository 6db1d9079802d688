package reconcile

import (
	"encoding/json"
	"fmt"
	"math/big"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/config"
	"github.com/genform/genform/statefile"
)

// FormatVersion is the version of the plan and state JSON documents and of
// saved plan files.
const FormatVersion = "1"

// Plan is the set of changes that would make the files and the state match
// the configuration. It holds plain data only, so it can be saved to a file
// and applied later.
type Plan struct {
	FormatVersion string `json:"format_version"`
	// Service identifies the service the fingerprints were computed for:
	// the base URL, or "simulator" for the built-in one.
	Service string `json:"service"`
	// Lineage and Serial are the state's when the plan was made; applying
	// a saved plan to a state that moved on since is refused.
	Lineage string `json:"lineage,omitempty"`
	Serial  uint64 `json:"serial"`
	// ConfigHash is the configuration's hash (files and variable values).
	ConfigHash string `json:"config_hash"`
	// Variables are the variable sources the plan was made with, so a
	// saved plan is applied with the same values.
	Variables config.Options `json:"variables"`
	Targets   []string       `json:"targets,omitempty"`
	Replace   []string       `json:"replace,omitempty"`
	// Changes are in dependency order, no-ops included.
	Changes []*Change `json:"changes"`
}

// Change is what the plan does to one resource instance, and why.
type Change struct {
	Addr     string `json:"address"`
	PrevAddr string `json:"previous_address,omitempty"`
	// Resource is the resource-level address ("image.hero" for "image.hero[0]").
	Resource string `json:"resource"`
	Kind     string `json:"kind"`
	Action   Action `json:"action"`
	Reason   string `json:"reason,omitempty"`
	// Attrs lists the attributes that differ (all of them for a create),
	// for explaining the change.
	Attrs []AttrChange `json:"attributes,omitempty"`
	// Before and After are the user-facing attributes of the recorded and
	// the declared instance; values known only after apply are absent
	// from After and listed in AfterUnknown.
	Before       map[string]any `json:"before,omitempty"`
	After        map[string]any `json:"after,omitempty"`
	AfterUnknown []string       `json:"after_unknown,omitempty"`
	// Fingerprint is the declared request's fingerprint, "" while it
	// depends on values known only after apply.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Media is how many files one generation of this instance yields.
	Media int `json:"media"`
	// Dir is where the instance's files go.
	Dir string `json:"dir,omitempty"`
	// GenerationID is the job a resume polls.
	GenerationID string `json:"generation_id,omitempty"`
	// Redownload lists the output indexes an update fetches again.
	Redownload []int    `json:"redownload,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
}

// AttrChange is one attribute's old and new value.
type AttrChange struct {
	Name    string `json:"name"`
	Before  any    `json:"before,omitempty"`
	After   any    `json:"after,omitempty"`
	Unknown bool   `json:"unknown,omitempty"`
}

// Summary counts a plan's changes for its closing line.
type Summary struct {
	Generate   int `json:"generate"`
	Images     int `json:"images"`
	Videos     int `json:"videos"`
	Redownload int `json:"redownload"`
	Move       int `json:"move"`
	Resume     int `json:"resume"`
	Delete     int `json:"delete"`
	NoOp       int `json:"no_op"`
}

// Summary counts the plan's changes.
func (p *Plan) Summary() Summary {
	var s Summary
	for _, c := range p.Changes {
		switch c.Action {
		case Create, Replace:
			s.Generate++
			if c.Kind == string(config.KindImage) {
				s.Images += c.Media
			} else {
				s.Videos += c.Media
			}
		case Update:
			s.Redownload++
		case Move:
			s.Move++
		case Resume:
			s.Resume++
		case Delete:
			s.Delete++
		default:
			s.NoOp++
		}
	}
	return s
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
func (p *Plan) Change(addr string) *Change {
	for _, c := range p.Changes {
		if c.Addr == addr {
			return c
		}
	}
	return nil
}

// PlanInput is what planning reads.
type PlanInput struct {
	Config *config.Config
	// State is a snapshot of the state; nil when there is no state file yet.
	State *statefile.Snapshot
	// Service is the service identity that enters fingerprints.
	Service string
	// Targets limits the plan to these addresses and what they depend on.
	Targets []string
	// Replace forces these instances to be generated anew.
	Replace []string
	// Refresh checks output files on disk (size and mtime, hashing only
	// files whose size or mtime changed).
	Refresh bool
	// Dir is the working directory output paths are relative to ("" for
	// the current directory).
	Dir string
}

type planner struct {
	in      PlanInput
	state   *statefile.Snapshot
	plan    *Plan
	diags   hcl.Diagnostics
	changed map[string]bool // resource-level addresses with a generating change
	replace map[string]bool
	used    map[string]bool // replace flags that matched an instance
	// orphans indexes records that left the configuration by fingerprint,
	// so a create of the same request becomes a move.
	orphans map[string][]*statefile.Resource
	claimed map[string]bool // orphan addresses taken by a move
	byAddr  map[string]*Change
	byRes   map[string][]string // state addresses by resource-level address
}

// MakePlan compares the configuration with the state and the files on disk.
func MakePlan(in PlanInput) (*Plan, hcl.Diagnostics) {
	st := in.State
	if st == nil {
		st = &statefile.Snapshot{}
	}
	p := &planner{
		in:      in,
		state:   st,
		changed: map[string]bool{},
		replace: map[string]bool{},
		used:    map[string]bool{},
		orphans: map[string][]*statefile.Resource{},
		claimed: map[string]bool{},
		byAddr:  map[string]*Change{},
		byRes:   map[string][]string{},
		plan: &Plan{
			FormatVersion: FormatVersion,
			Service:       in.Service,
			Lineage:       st.Meta.Lineage,
			Serial:        st.Meta.Serial,
			ConfigHash:    in.Config.Hash,
			Targets:       in.Targets,
			Replace:       in.Replace,
		},
	}
	for _, a := range in.Replace {
		p.replace[a] = true
	}
	cfg := in.Config

	declared := make(map[string]bool, len(cfg.Resources))
	for _, r := range cfg.Resources {
		declared[r.Addr()] = true
	}
	// Records of resources no longer declared can be claimed by a rename.
	for _, addr := range sortedKeys(st.Resources) {
		raddr := ResourceAddr(addr)
		p.byRes[raddr] = append(p.byRes[raddr], addr)
		if !declared[raddr] {
			p.addOrphan(st.Resources[addr])
		}
	}

	scope := make(config.Scope, len(cfg.Resources))
	instAddrs := map[string]bool{}
	for _, r := range cfg.Resources {
		insts, diags := cfg.Expand(r, scope)
		p.diags = append(p.diags, diags...)
		if diags.HasErrors() {
			continue
		}
		own := make(map[string]bool, len(insts))
		for _, inst := range insts {
			own[inst.Addr] = true
			instAddrs[inst.Addr] = true
		}
		// Instances of this resource that its expansion no longer yields
		// (count lowered, for_each key removed) may be claimed too.
		for _, addr := range p.byRes[r.Addr()] {
			if !own[addr] {
				p.addOrphan(st.Resources[addr])
			}
		}
		// Only what something refers to needs a value in the scope; for a
		// large configuration that is few of its resources.
		referenced := cfg.Referenced(r.Addr())
		var values map[string]cty.Value
		if referenced {
			values = make(map[string]cty.Value, len(insts))
		}
		for _, inst := range insts {
			c, rec, dir := p.planInstance(r, inst)
			p.add(c)
			if referenced {
				v := config.UnknownInstance()
				if rec != nil {
					v = recordValue(rec, dir)
				}
				values[inst.Addr] = v
			}
			if c.Action.Generates() || c.Action == Resume {
				p.changed[r.Addr()] = true
			}
		}
		if referenced {
			scope[r.Addr()] = config.ResourceValue(r, insts, values)
		}
	}

	// What is left in state and not declared is deleted.
	for _, addr := range sortedKeys(st.Resources) {
		if instAddrs[addr] || p.claimed[addr] {
			continue
		}
		rec := st.Resources[addr]
		c := &Change{
			Addr:     addr,
			Resource: ResourceAddr(addr),
			Kind:     rec.Kind,
			Action:   Delete,
			Reason:   "no longer in the configuration; its files are removed (the creation stays on the service)",
			Before:   beforeAttrs(rec),
		}
		if st.Protections[addr] {
			p.diags = append(p.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Instance cannot be destroyed",
				Detail:   fmt.Sprintf("%s has lifecycle.prevent_destroy set (kept in the state), but it is no longer in the configuration, so the plan would delete its files. Put the block back, or lift the protection by declaring it with prevent_destroy = false and applying before removing it.", addr),
			})
		}
		p.add(c)
	}
	// Interrupted submissions of instances that left the configuration are
	// forgotten; the plan says so, because the job may have been paid for.
	for _, addr := range sortedKeys(st.Intents) {
		if instAddrs[addr] || p.byAddr[addr] != nil {
			continue
		}
		it := st.Intents[addr]
		c := &Change{Addr: addr, Resource: ResourceAddr(addr), Kind: it.Kind, Action: Delete,
			Reason: "an interrupted submission of a resource no longer in the configuration is forgotten"}
		if it.GenerationID != "" {
			c.Warnings = append(c.Warnings, fmt.Sprintf("job %s was submitted by an earlier apply and may have been paid for; its outputs will not be downloaded", it.GenerationID))
		}
		p.add(c)
	}
	for _, a := range in.Replace {
		if !p.used[a] {
			p.diags = append(p.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid replace address",
				Detail:   fmt.Sprintf("-replace=%s matches no resource instance in the configuration; use an address listed by 'genform state list' or declared in the configuration, e.g. image.hero or image.hero[0].", a),
			})
		}
	}
	if len(in.Targets) > 0 {
		p.applyTargets()
	}
	return p.plan, p.diags
}

func (p *planner) add(c *Change) {
	p.plan.Changes = append(p.plan.Changes, c)
	p.byAddr[c.Addr] = c
}

func (p *planner) addOrphan(rec *statefile.Resource) {
	if rec == nil || rec.Fingerprint == "" || rec.Status != StatusSucceed {
		return
	}
	p.orphans[rec.Fingerprint] = append(p.orphans[rec.Fingerprint], rec)
}

// StatusSucceed is the service's status of a finished generation.
const StatusSucceed = "succeed"

// StatusFailed is the service's status of a failed generation.
const StatusFailed = "failed"

// planInstance decides the change of one instance. When the instance keeps
// a recorded generation, it also returns that record and the directory its
// files will be in, from which what refers to it takes its value; a nil
// record means its value is known only after apply.
func (p *planner) planInstance(r *config.Resource, inst *config.Instance) (*Change, *statefile.Resource, string) {
	st := p.state
	rec := st.Resources[inst.Addr]
	intent := st.Intents[inst.Addr]
	c := &Change{
		Addr:     inst.Addr,
		Resource: r.Addr(),
		Kind:     string(r.Kind),
		Media:    mediaCount(inst),
		Dir:      inst.Dir,
	}
	if inst.Request != nil {
		c.Fingerprint = config.Fingerprint(p.in.Service, inst.Endpoint, inst.Request)
	}
	forced := p.replace[inst.Addr] || p.replace[r.Addr()]
	if forced {
		p.used[inst.Addr] = true
		p.used[r.Addr()] = true
	}
	switch {
	case intent != nil && intent.GenerationID != "" && (c.Fingerprint == intent.Fingerprint || c.Fingerprint == "") && !forced:
		c.Action = Resume
		c.GenerationID = intent.GenerationID
		c.Reason = fmt.Sprintf("an earlier apply submitted job %s and did not finish; it is polled, not submitted again", intent.GenerationID)
		p.fillAttrs(c, rec, inst, false)
		return c, nil, ""
	case intent != nil && intent.GenerationID != "":
		c.Action = Create
		if rec != nil {
			c.Action = Replace
		}
		c.Reason = "the configuration changed since an interrupted apply submitted its job"
		c.Warnings = append(c.Warnings, fmt.Sprintf("job %s, submitted by an interrupted apply for the previous configuration, is abandoned; it may already have been paid for", intent.GenerationID))
		p.fillAttrs(c, rec, inst, true)
		p.checkProtected(r, inst, c, rec)
		return c, nil, ""
	case intent != nil:
		c.Action = Create
		if rec != nil {
			c.Action = Replace
		}
		c.Reason = "an earlier apply sent a create request but did not record the answer"
		c.Warnings = append(c.Warnings, fmt.Sprintf("an earlier apply sent the create request for %s at %s and was interrupted before the service answered; that generation may already have been paid for. Applying submits it again; if you find the earlier creation on the service, adopt it instead with: genform import %s CREATION_ID", inst.Addr, intent.CreatedAt.UTC().Format("2006-01-02 15:04:05Z"), inst.Addr))
		p.fillAttrs(c, rec, inst, true)
		p.checkProtected(r, inst, c, rec)
		return c, nil, ""
	case rec == nil:
		if c.Fingerprint != "" && !forced {
			if old := p.claimOrphan(c.Fingerprint, string(r.Kind)); old != nil {
				c.Action = Move
				c.PrevAddr = old.Addr
				c.Reason = fmt.Sprintf("%s was renamed to %s: the same request, so its state and files move and nothing is generated", old.Addr, inst.Addr)
				if old.Dir != inst.Dir {
					c.Attrs = append(c.Attrs, AttrChange{Name: "dir", Before: old.Dir, After: inst.Dir})
				}
				c.Before = beforeAttrs(old)
				return c, old, inst.Dir
			}
		}
		c.Action = Create
		c.Reason = "not yet generated"
		p.fillAttrs(c, nil, inst, true)
		return c, nil, ""
	case rec.Status == StatusFailed:
		c.Action = Replace
		c.Reason = "the last generation failed"
		if rec.Error != "" {
			c.Reason += ": " + rec.Error
		}
		p.fillAttrs(c, rec, inst, true)
		p.checkProtected(r, inst, c, rec)
		return c, nil, ""
	case forced:
		c.Action = Replace
		c.Reason = "replacement requested with -replace"
		p.fillAttrs(c, rec, inst, true)
		p.checkProtected(r, inst, c, rec)
		return c, nil, ""
	case c.Fingerprint == "":
		c.Action = Replace
		var ups []string
		for _, ref := range r.Refs {
			if p.changed[ref] {
				ups = append(ups, ref)
			}
		}
		c.Reason = "an input it references will change"
		if len(ups) > 0 {
			c.Reason = fmt.Sprintf("%s will change, and this resource is made from it", strings.Join(ups, ", "))
		}
		p.fillAttrs(c, rec, inst, false)
		p.checkProtected(r, inst, c, rec)
		return c, nil, ""
	case c.Fingerprint != rec.Fingerprint:
		p.fillAttrs(c, rec, inst, false)
		if len(c.Attrs) > 0 && ignoredOnly(c.Attrs, r.IgnoreChanges) {
			// Every difference is in ignore_changes: keep what was made.
			c.Attrs = nil
			break
		}
		c.Action = Replace
		c.Reason = describeDiff(c.Attrs, rec, inst, p.in.Service)
		p.checkProtected(r, inst, c, rec)
		return c, nil, ""
	}

	// The generation is current; check the local side.
	var reasons []string
	if rec.Dir != inst.Dir {
		reasons = append(reasons, fmt.Sprintf("dir changed from %s to %s: files move", rec.Dir, inst.Dir))
		c.Attrs = append(c.Attrs, AttrChange{Name: "dir", Before: rec.Dir, After: inst.Dir})
	}
	if rec.WatermarkFree != inst.WatermarkFree {
		reasons = append(reasons, "watermark_free changed: the other file is downloaded")
		c.Attrs = append(c.Attrs, AttrChange{Name: "watermark_free", Before: rec.WatermarkFree, After: inst.WatermarkFree})
		for _, o := range rec.Outputs {
			c.Redownload = append(c.Redownload, o.Index)
		}
	} else if p.in.Refresh {
		for _, o := range rec.Outputs {
			switch checkFile(p.in.Dir, o) {
			case fileMissing:
				reasons = append(reasons, fmt.Sprintf("output %d (%s) is missing", o.Index, o.Path))
				c.Redownload = append(c.Redownload, o.Index)
			case fileModified:
				reasons = append(reasons, fmt.Sprintf("output %d (%s) changed on disk", o.Index, o.Path))
				c.Redownload = append(c.Redownload, o.Index)
			}
		}
	}
	if len(reasons) == 0 {
		c.Action = NoOp
		return c, rec, rec.Dir
	}
	c.Action = Update
	c.Reason = strings.Join(reasons, "; ")
	c.Before = beforeAttrs(rec)
	return c, rec, inst.Dir
}

func (p *planner) checkProtected(r *config.Resource, inst *config.Instance, c *Change, rec *statefile.Resource) {
	if rec == nil || len(rec.Outputs) == 0 {
		return
	}
	if r.PreventDestroy || p.state.Protections[inst.Addr] {
		rng := r.DeclRange
		p.diags = append(p.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Instance cannot be destroyed",
			Detail:   fmt.Sprintf("%s has lifecycle.prevent_destroy set, but the plan would replace it (%s), discarding its files. Undo the change, or set prevent_destroy = false and apply that first.", inst.Addr, c.Reason),
			Subject:  &rng,
		})
	}
}

func (p *planner) claimOrphan(fp, kind string) *statefile.Resource {
	list := p.orphans[fp]
	for i, rec := range list {
		if rec.Kind == kind && !p.claimed[rec.Addr] {
			p.claimed[rec.Addr] = true
			p.orphans[fp] = append(list[:i:i], list[i+1:]...)
			return rec
		}
	}
	return nil
}

// applyTargets keeps only the changes of targeted resources and of what
// they depend on.
func (p *planner) applyTargets() {
	deps := map[string][]string{}
	for _, r := range p.in.Config.Resources {
		deps[r.Addr()] = r.Refs
	}
	keepRes := map[string]bool{}
	keepInst := map[string]bool{}
	var visit func(string)
	visit = func(raddr string) {
		if keepRes[raddr] {
			return
		}
		keepRes[raddr] = true
		for _, d := range deps[raddr] {
			visit(d)
		}
	}
	for _, t := range p.in.Targets {
		matched := false
		for _, c := range p.plan.Changes {
			if c.Addr == t || c.Resource == t {
				matched = true
				keepInst[c.Addr] = true
				for _, d := range deps[c.Resource] {
					visit(d)
				}
			}
		}
		if !matched {
			p.diags = append(p.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid target address",
				Detail:   fmt.Sprintf("-target=%s matches no resource in the configuration or the state; use an address such as image.hero or video.intro[\"red\"].", t),
			})
		}
	}
	kept := p.plan.Changes[:0]
	for _, c := range p.plan.Changes {
		if keepInst[c.Addr] || keepRes[c.Resource] {
			kept = append(kept, c)
		}
	}
	p.plan.Changes = kept
}

// ResourceAddr is the resource-level part of an instance address.
func ResourceAddr(addr string) string {
	if i := strings.IndexByte(addr, '['); i >= 0 {
		return addr[:i]
	}
	return addr
}

func mediaCount(inst *config.Instance) int {
	if inst.Resource.Kind == config.KindVideo {
		return 1
	}
	if v, ok := inst.Attrs["image_number"]; ok && v.IsKnown() && !v.IsNull() && v.Type() == cty.Number {
		n, _ := v.AsBigFloat().Int64()
		return int(n)
	}
	return 4
}

// recordValue is the value other resources see of a recorded instance,
// with its output paths in dir.
func recordValue(rec *statefile.Resource, dir string) cty.Value {
	outs := make([]config.OutputValue, len(rec.Outputs))
	for i, o := range rec.Outputs {
		path := o.Path
		if dir != "" && dir != rec.Dir {
			path = filepath.ToSlash(filepath.Join(dir, filepath.Base(o.Path)))
		}
		outs[i] = config.OutputValue{ID: o.ID, MediaURL: o.MediaURL, ThumbnailURL: o.ThumbnailURL, Path: path, SHA256: o.SHA256}
	}
	return config.InstanceValue(rec.CreationID, rec.GenerationID, rec.Status, outs)
}

// attribute display order: the service's fields first, then local ones.
var attrOrder = []string{"prompt", "negative_prompt", "image_number", "aspect_ratio", "resolution", "seed",
	"gen_mode", "duration", "source_image", "source_images", "frame_indices", "input_width", "input_height",
	"is_enable_prompt_enhancer", "is_public", "watermark_free", "dir"}

func attrRank(name string) int {
	for i, n := range attrOrder {
		if n == name {
			return i
		}
	}
	return len(attrOrder)
}

func sortAttrNames(names []string) {
	sort.Slice(names, func(i, j int) bool {
		ri, rj := attrRank(names[i]), attrRank(names[j])
		if ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
}

// beforeAttrs is the user-facing view of a recorded instance.
func beforeAttrs(rec *statefile.Resource) map[string]any {
	if rec == nil {
		return nil
	}
	m, err := config.FlattenRequest(rec.Endpoint, rec.Request)
	if err != nil || m == nil {
		m = map[string]any{}
	}
	m["dir"] = rec.Dir
	if rec.Kind == string(config.KindVideo) {
		m["watermark_free"] = rec.WatermarkFree
	}
	return m
}

// fillAttrs sets Before, After and Attrs: every declared attribute for a
// generation from scratch (all true), only the differing ones otherwise.
func (p *planner) fillAttrs(c *Change, rec *statefile.Resource, inst *config.Instance, all bool) {
	after := map[string]any{}
	for name, v := range inst.Attrs {
		if !v.IsWhollyKnown() {
			c.AfterUnknown = append(c.AfterUnknown, name)
			continue
		}
		if v.IsNull() {
			continue
		}
		after[name] = ctyToAny(v)
	}
	after["dir"] = inst.Dir
	if inst.Resource.Kind == config.KindVideo {
		after["watermark_free"] = inst.WatermarkFree
	}
	sort.Strings(c.AfterUnknown)
	c.After = after
	c.Before = beforeAttrs(rec)
	if rec == nil {
		all = true
	}
	names := map[string]bool{}
	for n := range after {
		names[n] = true
	}
	for _, n := range c.AfterUnknown {
		names[n] = true
	}
	for n := range c.Before {
		names[n] = true
	}
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	sortAttrNames(list)
	unknown := map[string]bool{}
	for _, n := range c.AfterUnknown {
		unknown[n] = true
	}
	for _, n := range list {
		b, hadB := c.Before[n]
		a, hadA := after[n]
		switch {
		case unknown[n]:
			c.Attrs = append(c.Attrs, AttrChange{Name: n, Before: b, Unknown: true})
		case all && rec == nil:
			if hadA {
				c.Attrs = append(c.Attrs, AttrChange{Name: n, After: a})
			}
		case !hadA && !hadB:
		case !equalJSON(b, a):
			c.Attrs = append(c.Attrs, AttrChange{Name: n, Before: b, After: a})
		}
	}
}

func ignoredOnly(attrs []AttrChange, ignore []string) bool {
	if len(ignore) == 0 {
		return false
	}
	set := map[string]bool{}
	for _, n := range ignore {
		set[n] = true
	}
	for _, a := range attrs {
		if !set[a.Name] && a.Name != "dir" && a.Name != "watermark_free" {
			return false
		}
	}
	return true
}

func describeDiff(attrs []AttrChange, rec *statefile.Resource, inst *config.Instance, service string) string {
	var names []string
	for _, a := range attrs {
		if a.Name == "dir" || a.Name == "watermark_free" {
			continue
		}
		names = append(names, a.Name)
	}
	switch {
	case len(names) == 1:
		return names[0] + " changed"
	case len(names) > 1:
		return strings.Join(names, ", ") + " changed"
	case rec.Endpoint != inst.Endpoint:
		return fmt.Sprintf("the endpoint changed from %s to %s", rec.Endpoint, inst.Endpoint)
	default:
		return fmt.Sprintf("the request differs from the recorded one (service %s, or a default changed)", service)
	}
}

func equalJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// ctyToAny converts a wholly known value to plain JSON-shaped Go values:
// string, bool, int64 or float64, []any and map[string]any.
func ctyToAny(v cty.Value) any {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString()
	case t == cty.Bool:
		return v.True()
	case t == cty.Number:
		bf := v.AsBigFloat()
		if i, acc := bf.Int64(); acc == big.Exact {
			return i
		}
		f, _ := bf.Float64()
		return f
	case t.IsListType() || t.IsSetType() || t.IsTupleType():
		out := make([]any, 0, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			out = append(out, ctyToAny(e))
		}
		return out
	case t.IsMapType() || t.IsObjectType():
		out := make(map[string]any, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			out[k.AsString()] = ctyToAny(e)
		}
		return out
	}
	return v.GoString()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
