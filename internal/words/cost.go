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
	case !e.Complete():
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
	return line + "."
}

// pricedParts lists what the estimate counts at each price, e.g. "12
// images at 0.02": one part per kind and unit price, in the order the
// plan's changes first use them.
func pricedParts(p *plans.Plan) []string {
	type key struct {
		video bool
		price config.Money
	}
	order, count := tally(p, true, func(c *plans.Change, video bool) key {
		pr := p.PricesOf(c)
		if video {
			return key{video: true, price: *pr.VideoSecond}
		}
		return key{price: *pr.Image}
	})
	var parts []string
	for _, k := range order {
		n := count[k]
		if n == 0 {
			continue
		}
		what := "image"
		if k.video {
			what = "video second"
		}
		parts = append(parts, fmt.Sprintf("%d %s%s at %s", n, what, Plural(n), k.price))
	}
	return parts
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
