package views

import (
	"github.com/genform/genform/reconcile/plans"
)

// changeCost is one change's estimate for the views, e.g. "0.08 USD":
// "" when the plan has no prices or the change makes no generation, and
// "unknown" when its kind has no price.
func changeCost(p *plans.Plan, c *plans.Change) string {
	e, priced := p.Cost()
	if !priced || !c.Action.Generates() {
		return ""
	}
	amount, ok := p.CostOf(c)
	if !ok {
		return "unknown"
	}
	if c.Uncounted != nil {
		return "at least " + amount.String() + " " + e.Currency
	}
	if c.AtMost {
		return "at most " + amount.String() + " " + e.Currency
	}
	return amount.String() + " " + e.Currency
}
