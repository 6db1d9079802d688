package secrets

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// A plan knows which of an instance's values are made from a sensitive
// variable (plans.Change.Sensitive). A record of the state does not:
// it holds the request as it was sent, real values included, and the
// service's detail, which echoes the prompt. The views of the state (show,
// show -json, state show, gallery) hide them with a hider, built from the
// configuration the command loaded.

// Hider says what to hide in the views of recorded instances.
type Hider struct {
	// byResource names the attributes the configuration makes from a
	// sensitive value, per resource (config.Resource.Sensitive).
	byResource map[addrs.Resource][]string
	// secrets are the string values of the variables that are secret
	// (sensitive, or made into the service token): a record whose block
	// was removed, or changed, still holds what was made from them.
	secrets []string
	// numbers are their numbers of minContained digits or more (a seed).
	numbers []json.Number
}

// NewHider reads what cfg makes sensitive. A nil cfg hides nothing.
func NewHider(cfg *config.Config) *Hider {
	h := &Hider{byResource: map[addrs.Resource][]string{}}
	if cfg == nil {
		return h
	}
	for _, r := range cfg.Resources {
		if names := r.Sensitive(); len(names) > 0 {
			h.byResource[r.Addr()] = names
		}
	}
	for name, v := range cfg.Variables {
		if !cfg.Secret(name) || !v.Value.IsWhollyKnown() {
			continue
		}
		val := config.JSONValue(v.Value)
		WalkStrings(val, func(s string) {
			if s != "" {
				h.secrets = append(h.secrets, s)
			}
		})
		walkNumbers(val, func(n json.Number) {
			if len(n) >= minContained {
				h.numbers = append(h.numbers, n)
			}
		})
	}
	return h
}

// WalkStrings calls f with every string in a JSON-shaped value.
func WalkStrings(v any, f func(string)) { walk(v, f) }

// walkNumbers calls f with every number in a JSON-shaped value.
func walkNumbers(v any, f func(json.Number)) { walk(v, f) }

// walk calls f with every leaf of type T (a string, a json.Number) in a
// JSON-shaped value, through its lists and objects.
func walk[T string | json.Number](v any, f func(T)) {
	switch x := v.(type) {
	case T:
		f(x)
	case []any:
		for _, e := range x {
			walk(e, f)
		}
	case map[string]any:
		for _, e := range x {
			walk(e, f)
		}
	}
}

// Record is what to hide in one record: attributes by name, any
// string that holds a hidden value, and the hidden numbers.
type Record struct {
	names   map[string]bool
	values  []string
	numbers []json.Number
}

// Of says what to hide in rec; nil when nothing is.
func (h *Hider) Of(rec *statefile.Resource) *Record {
	if h == nil || (len(h.byResource) == 0 && len(h.secrets) == 0 && len(h.numbers) == 0) {
		return nil
	}
	rh := &Record{names: map[string]bool{}, values: h.secrets, numbers: h.numbers}
	for _, n := range h.byResource[rec.Addr.Resource] {
		rh.names[n] = true
	}
	attrs := []map[string]any{RecordAttrs(rec)}
	if rec.Failure != nil {
		attrs = append(attrs, FailureAttrs(rec.Failure))
	}
	// An attribute holding a secret is hidden whatever the configuration
	// says now; the values of hidden attributes are hidden wherever they
	// appear (the service's detail echoes the prompt).
	for _, m := range attrs {
		for name, v := range m {
			if !rh.names[name] && rh.holdsAny(v) {
				rh.names[name] = true
			}
		}
	}
	for _, m := range attrs {
		for name, v := range m {
			if rh.names[name] {
				WalkStrings(v, func(s string) {
					if s != "" {
						rh.values = append(rh.values, s)
					}
				})
			}
		}
	}
	if len(rh.names) == 0 && len(rh.values) == 0 {
		return nil
	}
	return rh
}

// minContained is the shortest hidden value looked for inside longer
// strings; a shorter one is hidden only where a string is exactly it, so
// that a two-letter secret does not hide every URL of the detail.
const minContained = 4

// holdsSecret reports whether s is, or contains, a hidden value, in any
// case: upper and lower are the commonest ways a prompt is made from a
// secret. (Other ways, base64 say, are only hidden where the
// configuration still makes the attribute from the secret.)
func (rh *Record) holdsSecret(s string) bool {
	if len(rh.values) == 0 {
		return false
	}
	ls := strings.ToLower(s)
	for _, v := range rh.values {
		lv := strings.ToLower(v)
		if ls == lv || len(lv) >= minContained && strings.Contains(ls, lv) {
			return true
		}
	}
	return false
}

// Hides reports whether the attribute name is hidden.
func (rh *Record) Hides(name string) bool { return rh != nil && rh.names[name] }

// Attrs returns m with the hidden attributes' values replaced by
// placeholder (sensitiveValue{} for the human views, sensitiveText for
// JSON), leaving m as it is.
func (rh *Record) Attrs(m map[string]any, placeholder any) map[string]any {
	if rh == nil {
		return m
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if rh.Hides(k) || rh.holdsAny(v) {
			v = placeholder
		}
		out[k] = v
	}
	return out
}

// holdsAny reports whether a JSON-shaped value holds a hidden string or
// number.
func (rh *Record) holdsAny(v any) bool {
	found := false
	WalkStrings(v, func(s string) { found = found || rh.holdsSecret(s) })
	walkNumbers(v, func(n json.Number) { found = found || slices.Contains(rh.numbers, n) })
	return found
}

// JSON returns raw (a request or a service's detail) with the hidden
// values replaced by sensitiveText: the members named like a hidden
// attribute, at any depth (a request nests settings; a detail may echo
// them), and every string that holds a hidden value. raw is returned as
// it is when nothing in it is hidden, and is re-encoded otherwise.
func (rh *Record) JSON(raw json.RawMessage) json.RawMessage {
	if rh == nil || len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		// Not JSON: shown whole, or not at all.
		if rh.holdsSecret(string(raw)) {
			b, _ := json.Marshal(Text)
			return b
		}
		return raw
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if rh.holdsSecret(x) {
				changed = true
				return Text
			}
		case json.Number:
			if slices.Contains(rh.numbers, x) {
				changed = true
				return Text
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case map[string]any:
			for k, e := range x {
				if rh.names[k] {
					changed = true
					x[k] = Text
					continue
				}
				x[k] = walk(e)
			}
		}
		return v
	}
	v = walk(v)
	if !changed {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

// Text returns s, or sensitiveText when it holds a hidden value.
func (rh *Record) Text(s string) string {
	if rh != nil && rh.holdsSecret(s) {
		return Text
	}
	return s
}

// HidePlan adds to each change's Sensitive the attributes the
// configuration makes from a sensitive value, and those whose recorded or
// declared values hold a secret variable's value although the
// configuration does not make them from one now: a prompt that was made
// from a sensitive variable, replaced by a plain one, would otherwise be
// shown in the diff, and a deleted block's record in full. The saved plan
// leaves them out likewise.
func HidePlan(p *plans.Plan, h *Hider) {
	if h == nil || len(h.secrets) == 0 && len(h.numbers) == 0 && len(h.byResource) == 0 {
		return
	}
	rh := &Record{values: h.secrets, numbers: h.numbers}
	for _, c := range p.Changes {
		// A destroy plan does not evaluate the configuration: what it
		// makes sensitive is hidden in the records it deletes.
		for _, name := range h.byResource[c.Addr.Resource] {
			if !slices.Contains(c.Sensitive, name) {
				c.Sensitive = append(c.Sensitive, name)
			}
		}
		add := func(name string, vals ...any) {
			if slices.Contains(c.Sensitive, name) {
				return
			}
			for _, v := range vals {
				if rh.holdsAny(v) {
					c.Sensitive = append(c.Sensitive, name)
					return
				}
			}
		}
		for name, v := range c.Before {
			add(name, v)
		}
		for name, v := range c.After {
			add(name, v)
		}
		for _, a := range c.Attrs {
			add(a.Name, a.Before, a.After)
		}
		config.SortAttrNames(c.Sensitive)
	}
}

// Masker hides secrets inside the messages of an apply: a service that
// refuses a request may quote what it was sent (its prompt, say), and
// the message is printed as the service wrote it.
type Masker struct {
	re *regexp.Regexp // nil when there is nothing to hide
}

// NewMasker hides the secret variables' values, and the values of the
// attributes plan p makes from one (however they were computed), in any
// case.
func NewMasker(h *Hider, p *plans.Plan) *Masker {
	var words []string
	add := func(v any) {
		WalkStrings(v, func(s string) {
			if len(s) >= minContained {
				words = append(words, s)
			}
		})
	}
	if h != nil {
		for _, s := range h.secrets {
			add(s)
		}
		for _, n := range h.numbers {
			words = append(words, string(n))
		}
	}
	if p != nil {
		for _, c := range p.Changes {
			for _, name := range c.Sensitive {
				add(c.After[name])
				add(c.Before[name])
			}
		}
	}
	if len(words) == 0 {
		return &Masker{}
	}
	// The longest first, so that a prompt is hidden whole rather than
	// the secret inside it.
	slices.SortFunc(words, func(a, b string) int { return len(b) - len(a) })
	words = slices.Compact(words)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return &Masker{re: regexp.MustCompile("(?i)" + strings.Join(words, "|"))}
}

// Text returns s with every hidden value in it replaced by sensitiveText.
func (m *Masker) Text(s string) string {
	if m == nil || m.re == nil {
		return s
	}
	return m.re.ReplaceAllLiteralString(s, Text)
}

// Err returns Err, or one whose message hides what Err's quotes of a
// hidden value; errors.Is and errors.As still see Err.
func (m *Masker) Err(err error) error {
	if err == nil {
		return nil
	}
	if msg := m.Text(err.Error()); msg != err.Error() {
		return &maskedError{msg: msg, err: err}
	}
	return err
}

type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

// Text stands for a value that derives from a sensitive variable.
const Text = "(sensitive)"

// Value is the placeholder the human views format as
// sensitiveText, never as a quoted string or a word diff.
type Value struct{}

// Redact returns c's attributes with the values of its sensitive ones
// replaced by placeholder, leaving c as it is.
func Redact(c *plans.Change, placeholder any) (attrs []plans.AttrChange, before, after map[string]any) {
	if len(c.Sensitive) == 0 {
		return c.Attrs, c.Before, c.After
	}
	hide := func(m map[string]any) map[string]any {
		if m == nil {
			return nil
		}
		out := make(map[string]any, len(m))
		for k, v := range m {
			if slices.Contains(c.Sensitive, k) {
				v = placeholder
			}
			out[k] = v
		}
		return out
	}
	for _, a := range c.Attrs {
		if slices.Contains(c.Sensitive, a.Name) {
			a.Before = placeholder
			if !a.Unknown {
				a.After = placeholder
			}
		}
		attrs = append(attrs, a)
	}
	return attrs, hide(c.Before), hide(c.After)
}
