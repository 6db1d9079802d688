package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// hasSensitive reports whether marks, from UnmarkDeep, hold markSensitive.
func hasSensitive(marks cty.ValueMarks) bool {
	_, ok := marks[markSensitive]
	return ok
}

// hideSensitive rewrites the diagnostics of evaluating an expression that
// uses a sensitive value: functions and operators quote the values they
// refuse (tonumber's `cannot convert "..." to number`, file's `no file
// "..."`), so their details are replaced by one that quotes nothing. HCL
// keeps the expression and its context on such diagnostics, which says
// which values were in play.
func hideSensitive(diags hcl.Diagnostics) hcl.Diagnostics {
	for i, d := range diags {
		if d.Expression == nil || d.EvalContext == nil || !usesSensitive(d.Expression, d.EvalContext) {
			continue
		}
		hidden := *d
		hidden.Detail = "The expression uses a value made from a sensitive variable, and why it failed is not shown, since the reason may quote the value. Check the value the variable is given."
		// The writer would print the values of the expression's
		// variables: it skips marked ones, but not values taken from
		// inside them.
		hidden.Expression, hidden.EvalContext = nil, nil
		diags[i] = &hidden
	}
	return diags
}

// usesSensitive reports whether an expression refers to a value that is,
// or holds, a sensitive one.
func usesSensitive(expr hcl.Expression, ctx *hcl.EvalContext) bool {
	for _, tr := range expr.Variables() {
		// Also var.s alone: a traversal into it (var.s.x) may fail
		// where var.s does not.
		steps := []hcl.Traversal{tr}
		if len(tr) > 2 {
			steps = append(steps, tr[:2])
		}
		for _, t := range steps {
			v, diags := t.TraverseAbs(ctx)
			if diags.HasErrors() {
				continue
			}
			if _, marks := v.UnmarkDeep(); hasSensitive(marks) {
				return true
			}
			break
		}
	}
	return false
}
