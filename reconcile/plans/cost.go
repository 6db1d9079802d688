package plans

import (
	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
)

// Estimate is what applying a plan would cost, from the service's prices.
// Only generations cost: a restore, a move, an update and a resume are
// free.
type Estimate struct {
	// Amount is the sum of the priced generations.
	Amount config.Money
	// Currency names the unit of Amount.
	Currency string
	// Images and VideoSeconds are what the generations make, priced or not.
	Images, VideoSeconds int
	// UnpricedImages and UnpricedSeconds are the parts no price is set
	// for: Amount leaves them out, so it is a lower bound unless both are 0.
	UnpricedImages, UnpricedSeconds int
	// AtMost is true when a count or a duration is known only after apply
	// and was taken at the most the service allows: Amount is then an
	// upper bound (of what is priced).
	AtMost bool
}

// Complete reports whether every generation is priced.
func (e Estimate) Complete() bool { return e.UnpricedImages == 0 && e.UnpricedSeconds == 0 }

// Cost is what applying the change would cost at prices: ok is false when
// its kind has no price. A change that makes no generation costs 0.
func (c *Change) Cost(prices *config.Prices) (amount config.Money, ok bool) {
	if !c.Action.Generates() || prices == nil {
		return 0, prices != nil
	}
	if c.Kind() == addrs.Image {
		if prices.Image == nil {
			return 0, false
		}
		return prices.Image.Times(int64(c.Media)), true
	}
	if prices.VideoSecond == nil {
		return 0, false
	}
	return prices.VideoSecond.Times(int64(c.Seconds) * int64(c.Media)), true
}

// Cost estimates what applying the plan would cost at its Prices; ok is
// false when the configuration sets none, and a plan then shows counts
// only.
func (p *Plan) Cost() (e Estimate, ok bool) {
	prices := p.Prices
	if prices == nil {
		return Estimate{}, false
	}
	e.Currency = prices.Currency
	for _, c := range p.Changes {
		if !c.Action.Generates() {
			continue
		}
		amount, priced := c.Cost(prices)
		e.AtMost = e.AtMost || c.AtMost
		switch {
		case c.Kind() == addrs.Image:
			e.Images += c.Media
			if !priced {
				e.UnpricedImages += c.Media
			}
		default:
			e.VideoSeconds += c.Seconds * c.Media
			if !priced {
				e.UnpricedSeconds += c.Seconds * c.Media
			}
		}
		e.Amount = e.Amount.Plus(amount)
	}
	return e, true
}
