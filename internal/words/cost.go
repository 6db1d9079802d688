package words

import (
	"fmt"
	"strings"

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
	var parts []string
	if n := e.Images - e.UnpricedImages; n > 0 {
		parts = append(parts, fmt.Sprintf("%d image%s at %s", n, Plural(n), p.Prices.Image))
	}
	if n := e.VideoSeconds - e.UnpricedSeconds; n > 0 {
		parts = append(parts, fmt.Sprintf("%d video second%s at %s", n, Plural(n), p.Prices.VideoSecond))
	}
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
		var missing []string
		if e.UnpricedImages > 0 {
			missing = append(missing, fmt.Sprintf("%d image%s without a price: set prices.image", e.UnpricedImages, Plural(e.UnpricedImages)))
		}
		if e.UnpricedSeconds > 0 {
			missing = append(missing, fmt.Sprintf("%d video second%s without a price: set prices.video_second", e.UnpricedSeconds, Plural(e.UnpricedSeconds)))
		}
		line += "; " + strings.Join(missing, "; ") + " in the service block"
	}
	return line + "."
}
