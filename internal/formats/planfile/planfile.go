package planfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/atomicfile"
	"github.com/genform/genform/internal/formats/jsonplan"
	"github.com/genform/genform/reconcile/plans"
)

// The saved plan file (plan -out, apply PLANFILE, show PLANFILE): a JSON
// document of its own, versioned apart from the public plan document,
// holding the changes the plan showed, which apply and show check a plan
// made again against (nothing of the file is trusted: it is readable,
// and anyone can edit it). It holds no secret: the values of
// variables that are sensitive, or that the service's token is made from,
// are left out and must be given again to apply.

// planFileKind marks a saved plan, so a random JSON file is not taken for one.
const planFileKind = "genform-plan"

// planFileVersion is the saved plan format this genform writes and reads.
// Version 1 was the engine's plan marshalled as it was; a plan is
// short-lived, so an older one is refused with "run plan again".
const planFileVersion = "2"

// Saved is a plan with the command-line inputs it was made with.
type Saved struct {
	Plan *plans.Plan
	// Vars are the -var assignments of variables that are not secret, as
	// typed; VarFiles the -var-file paths.
	Vars, VarFiles []string
	// Secret names the variables set by -var whose values were left out:
	// apply needs them again.
	Secret []string
	// MigrateFrom is the service the state named when the plan was made
	// with -migrate-service for another one; "" when there was no switch.
	// Applying the plan accepts that switch (and only that one).
	MigrateFrom string
	// NoRefresh is true when the plan was made with -refresh=false: it
	// did not look at the files on disk.
	NoRefresh bool
}

// MigratesFrom reports whether sp, a saved plan or nil, was made to move
// a state away from service.
func (sp *Saved) MigratesFrom(service string) bool {
	return sp != nil && sp.MigrateFrom != "" && sp.MigrateFrom == service
}

type planFileJSON struct {
	Kind          string           `json:"kind"`
	FormatVersion string           `json:"format_version"`
	Service       string           `json:"service"`
	MigrateFrom   string           `json:"migrate_service_from,omitempty"`
	Lineage       string           `json:"lineage,omitempty"`
	Serial        uint64           `json:"serial"`
	ConfigHash    string           `json:"config_hash"`
	Variables     planVarsJSON     `json:"variables"`
	Targets       []string         `json:"targets,omitempty"`
	Replace       []string         `json:"replace,omitempty"`
	NoRefresh     bool             `json:"refresh_skipped,omitempty"`
	Changes       []planChangeJSON `json:"changes"`
	Prices        *jsonplan.Prices `json:"prices,omitempty"`
}

type planVarsJSON struct {
	Vars     []string `json:"vars,omitempty"`
	VarFiles []string `json:"var_files,omitempty"`
	Secret   []string `json:"secret,omitempty"`
}

// planChangeJSON is one change; the values of the attributes its
// "sensitive" names are left out (null).
type planChangeJSON struct {
	Address         string         `json:"address"`
	PreviousAddress string         `json:"previous_address,omitempty"`
	Action          string         `json:"action"`
	Reason          planReasonJSON `json:"reason"`
	jsonplan.Values
}

type planReasonJSON struct {
	Code         string            `json:"code,omitempty"`
	Attrs        []string          `json:"attributes,omitempty"`
	Upstream     []string          `json:"upstream,omitempty"`
	Service      string            `json:"service,omitempty"`
	PrevService  string            `json:"prev_service,omitempty"`
	From         string            `json:"from,omitempty"`
	To           string            `json:"to,omitempty"`
	GenerationID string            `json:"generation_id,omitempty"`
	CreationID   string            `json:"creation_id,omitempty"`
	Holder       string            `json:"holder,omitempty"`
	Workspace    string            `json:"workspace,omitempty"`
	Cached       bool              `json:"cached,omitempty"`
	Stored       bool              `json:"stored,omitempty"`
	Since        *time.Time        `json:"since,omitempty"`
	Error        string            `json:"error,omitempty"`
	Local        []localChangeJSON `json:"local,omitempty"`
}

type localChangeJSON struct {
	What    string `json:"what"`
	Output  int    `json:"output,omitempty"`
	Path    string `json:"path,omitempty"`
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	Protect bool   `json:"protect,omitempty"`
	Stored  bool   `json:"stored,omitempty"`
	Cached  bool   `json:"cached,omitempty"`
	// GenerationID and Since are a settled submission's.
	GenerationID string     `json:"generation_id,omitempty"`
	Since        *time.Time `json:"since,omitempty"`
}

// New is plan with the variables of opts as a saved plan keeps
// them: secret ones (cfg.Secret) by name only.
func New(plan *plans.Plan, cfg *config.Config, opts config.Options) *Saved {
	sp := &Saved{Plan: plan, VarFiles: opts.VarFiles}
	for _, v := range opts.Vars {
		name, _, _ := strings.Cut(v, "=")
		name = strings.TrimSpace(name)
		if cfg.Secret(name) {
			if !slices.Contains(sp.Secret, name) {
				sp.Secret = append(sp.Secret, name)
			}
			continue
		}
		sp.Vars = append(sp.Vars, v)
	}
	return sp
}

// Write saves sp to path, readable by its owner only.
func Write(path string, sp *Saved) error {
	p := sp.Plan
	doc := planFileJSON{
		Kind:          planFileKind,
		FormatVersion: planFileVersion,
		Service:       p.Service,
		MigrateFrom:   sp.MigrateFrom,
		Lineage:       p.Lineage,
		Serial:        p.Serial,
		ConfigHash:    p.ConfigHash,
		Variables:     planVarsJSON{Vars: sp.Vars, VarFiles: sp.VarFiles, Secret: sp.Secret},
		Targets:       addrs.Strings(p.Targets),
		Replace:       addrs.Strings(p.Replace),
		NoRefresh:     sp.NoRefresh,
		Changes:       make([]planChangeJSON, 0, len(p.Changes)),
		Prices:        jsonplan.EncodePrices(p.Prices),
	}
	for _, c := range p.Changes {
		doc.Changes = append(doc.Changes, encodePlanChange(c))
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the plan: %w", err)
	}
	if err := atomicfile.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("saving the plan: %w", err)
	}
	return nil
}

func encodePlanChange(c *plans.Change) planChangeJSON {
	var r plans.Reason
	if c.Reason != nil {
		r = *c.Reason
	}
	cj := planChangeJSON{
		Address: c.Addr.String(),
		Action:  c.Action.String(),
		Values:  jsonplan.EncodeValues(c, nil),
		Reason: planReasonJSON{
			Code:         r.Code.String(),
			Attrs:        r.Attrs,
			Service:      r.Service,
			PrevService:  r.PrevService,
			GenerationID: r.GenerationID,
			CreationID:   r.CreationID,
			Cached:       r.Cached,
			Stored:       r.Stored,
			Error:        r.Error,
			Workspace:    r.Workspace,
		},
	}
	if !c.PrevAddr.IsZero() {
		cj.PreviousAddress = c.PrevAddr.String()
	}
	if !r.Holder.IsZero() {
		cj.Reason.Holder = r.Holder.String()
	}
	for _, u := range r.Upstream {
		cj.Reason.Upstream = append(cj.Reason.Upstream, u.String())
	}
	if !r.From.IsZero() {
		cj.Reason.From = r.From.Path()
	}
	if !r.To.IsZero() {
		cj.Reason.To = r.To.Path()
	}
	if !r.Since.IsZero() {
		since := r.Since.UTC()
		cj.Reason.Since = &since
	}
	for _, l := range r.Local {
		lj := localChangeJSON{What: l.What.String(), Output: l.Output, Path: l.Path, From: l.From, To: l.To, Protect: l.Protect, Stored: l.Stored, Cached: l.Cached, GenerationID: l.GenerationID}
		if !l.Since.IsZero() {
			since := l.Since.UTC()
			lj.Since = &since
		}
		cj.Reason.Local = append(cj.Reason.Local, lj)
	}
	return cj
}

// Read loads a plan saved by writePlanFile.
func Read(path string) (*Saved, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the saved plan: %w", err)
	}
	notPlan := fmt.Errorf("%s is not a plan saved by 'genform plan -out'", path)
	var head struct {
		Kind          string `json:"kind"`
		FormatVersion string `json:"format_version"`
	}
	if json.Unmarshal(b, &head) != nil || head.Kind != planFileKind {
		return nil, notPlan
	}
	if head.FormatVersion != planFileVersion {
		return nil, fmt.Errorf("%s was saved in plan format %q; this genform reads format %q: run plan again", path, head.FormatVersion, planFileVersion)
	}
	var doc planFileJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // attribute values as planning made them
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w; run plan again", notPlan, err)
	}
	damaged := func(err error) error {
		return fmt.Errorf("the saved plan %s is damaged: %w; run 'genform plan -out=FILE' again", path, err)
	}
	p := &plans.Plan{Service: doc.Service, Lineage: doc.Lineage, Serial: doc.Serial, ConfigHash: doc.ConfigHash}
	if p.Targets, err = parseAddrList(doc.Targets, addrs.ParseTarget); err != nil {
		return nil, damaged(err)
	}
	if p.Replace, err = parseAddrList(doc.Replace, addrs.ParseInstance); err != nil {
		return nil, damaged(err)
	}
	if p.Prices, err = jsonplan.DecodePrices(doc.Prices); err != nil {
		return nil, damaged(err)
	}
	for i, cj := range doc.Changes {
		c, err := decodePlanChange(cj)
		if err != nil {
			return nil, damaged(fmt.Errorf("change %d: %w", i, err))
		}
		p.Changes = append(p.Changes, c)
	}
	return &Saved{Plan: p, Vars: doc.Variables.Vars, VarFiles: doc.Variables.VarFiles, Secret: doc.Variables.Secret, MigrateFrom: doc.MigrateFrom, NoRefresh: doc.NoRefresh}, nil
}

func decodePlanChange(cj planChangeJSON) (*plans.Change, error) {
	var err error
	c := &plans.Change{}
	if c.Addr, err = addrs.ParseInstance(cj.Address); err != nil {
		return nil, err
	}
	if err := cj.Decode(c); err != nil {
		return nil, err
	}
	if cj.PreviousAddress != "" {
		if c.PrevAddr, err = addrs.ParseInstance(cj.PreviousAddress); err != nil {
			return nil, err
		}
	}
	if c.Action, err = plans.ParseAction(cj.Action); err != nil {
		return nil, err
	}
	rj := cj.Reason
	r := plans.Reason{Attrs: rj.Attrs, Service: rj.Service, PrevService: rj.PrevService, GenerationID: rj.GenerationID,
		CreationID: rj.CreationID, Cached: rj.Cached, Stored: rj.Stored, Error: rj.Error, Workspace: rj.Workspace}
	if r.Code, err = plans.ParseReasonCode(rj.Code); err != nil {
		return nil, err
	}
	if rj.Holder != "" {
		if r.Holder, err = addrs.ParseInstance(rj.Holder); err != nil {
			return nil, fmt.Errorf("holder: %w", err)
		}
	}
	for _, u := range rj.Upstream {
		a, err := addrs.ParseInstance(u)
		if err != nil || !a.Key.IsZero() {
			return nil, fmt.Errorf("upstream %q is not a resource address", u)
		}
		r.Upstream = append(r.Upstream, a.Resource)
	}
	for _, ep := range []struct {
		path string
		dst  *addrs.Endpoint
	}{{rj.From, &r.From}, {rj.To, &r.To}} {
		if ep.path == "" {
			continue
		}
		e, ok := addrs.ParseEndpoint(ep.path, c.Addr.Resource.Kind)
		if !ok {
			return nil, fmt.Errorf("unknown endpoint %q", ep.path)
		}
		*ep.dst = e
	}
	if rj.Since != nil {
		r.Since = *rj.Since
	}
	for _, l := range rj.Local {
		what, err := plans.ParseLocalWhat(l.What)
		if err != nil {
			return nil, err
		}
		lc := plans.LocalChange{What: what, Output: l.Output, Path: l.Path, From: l.From, To: l.To, Protect: l.Protect, Stored: l.Stored, Cached: l.Cached, GenerationID: l.GenerationID}
		if l.Since != nil {
			lc.Since = *l.Since
		}
		r.Local = append(r.Local, lc)
	}
	if r.Code != plans.ReasonNone {
		c.Reason = &r
	}
	return c, nil
}

func parseAddrList(list []string, parse func(string) (addrs.Instance, error)) ([]addrs.Instance, error) {
	var out []addrs.Instance
	for _, s := range list {
		a, err := parse(s)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}
