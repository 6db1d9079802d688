package words

import (
	"fmt"
	"strings"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/reconcile/plans"
)

// CostLine is the plan's estimate, e.g. "Estimated cost: 0.28 USD (12
// images at 0.02, 8 video seconds at 0.05)." It is "" when the
// configuration sets no prices: a plan then shows counts only.
func CostLine(p *plans.Plan) string {
	e, ok := p.Cost()
	if !ok {
		return ""
	}
	parts := pricedParts(p)
	line := fmt.Sprintf("Estimated cost: %s %s", e.Amount, e.Currency)
	switch {
	case !e.Complete() || e.Uncounted > 0:
		line = fmt.Sprintf("Estimated cost: at least %s %s", e.Amount, e.Currency)
	case e.AtMost:
		line = fmt.Sprintf("Estimated cost: at most %s %s", e.Amount, e.Currency)
	}
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	if e.AtMost && e.Complete() {
		line += "; a count or duration known only after apply is taken at the most the service allows"
	}
	if !e.Complete() {
		line += "; " + strings.Join(unpricedParts(p), "; ")
	}
	if e.Uncounted > 0 {
		line += "; " + uncountedPart(p.Uncounted())
	}
	return line + "."
}

// uncountedPart says which count fields the estimate could not count,
// the first by name: "input.num_images of image.b is known only after
// apply (taken as 1; and 2 more)".
func uncountedPart(cs []*plans.Change) string {
	if len(cs) == 0 {
		return ""
	}
	s := Uncounted(cs[0]) + " (taken as 1"
	if n := len(cs) - 1; n > 0 {
		s += fmt.Sprintf("; and %d more generation%s whose count is not known", n, Plural(n))
	}
	return s + ")"
}

// Uncounted says why c's count field cannot be counted:
// "input.num_images of image.b is known only after apply", "... is not a
// whole number of at least 1", or "input of image.b is known only after
// apply, so its count fields are not"; "" when there is none.
func Uncounted(c *plans.Change) string {
	u := c.Uncounted
	switch {
	case u == nil:
		return ""
	case u.Key == "input":
		return fmt.Sprintf("input of %s is known only after apply, so which count fields it sets is not", c.Addr)
	case u.Unknown:
		return fmt.Sprintf("%s of %s is known only after apply", u.Key, c.Addr)
	}
	return fmt.Sprintf("%s of %s is not a whole number of at least 1", u.Key, c.Addr)
}

// pricedParts lists what the estimate counts at each price, e.g. "12
// images at 0.02", "6 megapixels at 0.003", "16 video seconds of 1080p
// at 0.4": one part per unit and price, in the order the plan's changes
// first use them.
func pricedParts(p *plans.Plan) []string {
	type key struct {
		unit  plans.Unit
		lines int64
		price config.Money
	}
	var order []key
	count := map[key]int64{}
	for _, c := range p.Changes {
		if !c.Action.Generates() {
			continue
		}
		if _, ok := p.CostOf(c); !ok {
			continue
		}
		r, ok := c.Rate(p.PricesOf(c))
		if !ok {
			continue
		}
		k := key{r.Unit, r.Lines, r.Price}
		if _, seen := count[k]; !seen {
			order = append(order, k)
		}
		count[k] += r.Units
	}
	var parts []string
	for _, k := range order {
		n := count[k]
		if n == 0 {
			continue
		}
		var what string
		switch k.unit {
		case plans.UnitImage:
			what = "image" + Plural(int(n))
		case plans.UnitMegapixel:
			what = "megapixel" + Plural(int(n))
		case plans.UnitVideoSecond:
			what = "video second" + Plural(int(n))
		case plans.UnitVideoSecondAt:
			what = fmt.Sprintf("video second%s of %s", Plural(int(n)), resolutionName(k.lines))
		}
		parts = append(parts, fmt.Sprintf("%d %s at %s", n, what, k.price))
	}
	return parts
}

// resolutionName names a resolution as prices key it: "1080p", "4k".
func resolutionName(lines int64) string {
	if lines == 2160 {
		return "4k"
	}
	return fmt.Sprintf("%dp", lines)
}

// unpricedParts says what the estimate leaves out and where to set its
// price: the service block for the reference service, the provider's
// block for a model.
func unpricedParts(p *plans.Plan) []string {
	type key struct {
		video    bool
		provider string
	}
	order, count := tally(p, false, func(c *plans.Change, video bool) key {
		return key{video: video, provider: c.Provider()}
	})
	var parts []string
	for _, k := range order {
		n := count[k]
		what, field := "image", "prices.image"
		if k.video {
			what, field = "video second", "prices.video_second"
		}
		where := "the service block"
		if k.provider != "" {
			where = fmt.Sprintf("the provider %q block (in the estimate's currency)", k.provider)
		}
		parts = append(parts, fmt.Sprintf("%d %s%s without a price: set %s in %s", n, what, Plural(n), field, where))
	}
	return parts
}

// tally counts what the plan's generating changes make, the priced ones
// or the others as priced says: images, or seconds of video. It groups
// them by keyOf, in the order the changes first use each key.
func tally[K comparable](p *plans.Plan, priced bool, keyOf func(c *plans.Change, video bool) K) (order []K, count map[K]int) {
	count = map[K]int{}
	for _, c := range p.Changes {
		if !c.Action.Generates() {
			continue
		}
		if _, ok := p.CostOf(c); ok != priced {
			continue
		}
		video, n := c.Kind() == addrs.Video, c.Media
		if video {
			n = c.Seconds * c.Media
		}
		k := keyOf(c, video)
		if _, seen := count[k]; !seen {
			order = append(order, k)
		}
		count[k] += n
	}
	return order, count
}
