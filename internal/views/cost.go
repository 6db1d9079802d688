package views

import (
	"github.com/genform/genform/reconcile/plans"
)

// changeCost is one change's estimate for the views, e.g. "0.08 USD":
// "" when the plan has no prices or the change makes no generation, and
// "unknown" when its kind has no price.
func changeCost(p *plans.Plan, c *plans.Change) string {
	if p.Prices == nil || !c.Action.Generates() {
		return ""
	}
	amount, ok := c.Cost(p.Prices)
	if !ok {
		return "unknown"
	}
	if c.AtMost {
		return "at most " + amount.String() + " " + p.Prices.Currency
	}
	return amount.String() + " " + p.Prices.Currency
}
