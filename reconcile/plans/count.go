package plans

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/schema"
)

// This file holds what the count fields of a live provider's input say:
// a block passes input through unchanged, and a model the tables do not
// list (or a field a listed model's row does not map) can ask for many
// files with one of them (schema.CountKeys). The planner multiplies the
// count it shows, prices and checks against -max-cost by them, and the
// engine keeps as many files as they ask for.

// maxCount bounds a count read from input, so that a plan's sums of
// files cannot overflow: far above what any provider makes a request, it
// is priced far above any -max-cost.
const maxCount = math.MaxInt32

// Uncounted is a count field of a generation's input whose value the
// plan cannot count: the generation may make more files than the plan
// shows, so that its estimate is a lower bound and -max-cost refuses it.
type Uncounted struct {
	// Key names it: "input.num_images", or "input" when input itself is
	// known only after apply (so that which fields it sets is not known).
	Key string
	// Unknown is true when its value is known only after apply, false
	// when it is not a whole number of at least 1.
	Unknown bool
}

// InputCount is what the count fields of inst's input say one generation
// of it makes: factor is the product of their values (1 when it sets
// none), counted is true when it sets any, and uncounted is the first
// (in schema.CountKeys' order) whose value cannot be counted, taken as 1
// in factor (nil when every one can).
//
// Several count fields multiply: on the models that take more than one
// they do (fal's Seedream makes num_images generations of up to
// max_images images; consistent-character number_of_outputs poses of
// number_of_images_per_pose), and where two would name one count the
// product is still at least that count, so the estimate errs only
// towards a higher price. A value is counted when it is a whole number of
// at least 1, or a string of one (which the providers' validators
// convert); null is the model's default, counted as 1.
//
// It reads the fields by name rather than walking input, so that it
// allocates nothing for the input of a large plan's no-ops.
func InputCount(inst *config.Instance) (factor int, counted bool, uncounted *Uncounted) {
	factor = 1
	if inst.Endpoint.Provider() == addrs.Reference {
		return factor, false, nil
	}
	input, set := inst.Attr("input")
	if !set || input.IsKnown() && input.IsNull() {
		return factor, false, nil
	}
	if !input.IsKnown() {
		return factor, false, &Uncounted{Key: "input", Unknown: true}
	}
	ty := input.Type()
	if !ty.IsObjectType() && !ty.IsMapType() {
		return factor, false, nil // validate refuses it
	}
	for _, key := range schema.CountKeys {
		var v cty.Value
		switch {
		case ty.IsObjectType() && ty.HasAttribute(key):
			v = input.GetAttr(key)
		case ty.IsMapType() && input.HasIndex(cty.StringVal(key)).True():
			v = input.Index(cty.StringVal(key))
		default:
			continue
		}
		if v.IsKnown() && v.IsNull() {
			continue
		}
		counted = true
		if !v.IsKnown() {
			if uncounted == nil {
				uncounted = &Uncounted{Key: "input." + key, Unknown: true}
			}
			continue
		}
		n, ok := countOf(v)
		if !ok {
			if uncounted == nil {
				uncounted = &Uncounted{Key: "input." + key}
			}
			continue
		}
		factor = int(min(int64(factor)*n, maxCount))
	}
	return factor, counted, uncounted
}

// countOf is the count v says: a whole number from 1, or a string of one,
// at most maxCount.
func countOf(v cty.Value) (int64, bool) {
	var f *big.Float
	switch v.Type() {
	case cty.Number:
		f = v.AsBigFloat()
	case cty.String:
		n, err := strconv.ParseInt(strings.TrimSpace(v.AsString()), 10, 64)
		if err != nil {
			return 0, false
		}
		f = new(big.Float).SetInt64(n)
	default:
		return 0, false
	}
	if !f.IsInt() || f.Sign() <= 0 {
		return 0, false
	}
	n, acc := f.Int64()
	if acc != big.Exact || n > maxCount {
		return maxCount, true
	}
	return n, true
}
