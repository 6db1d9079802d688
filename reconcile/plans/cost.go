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
	// Uncounted is how many generations have a count field in their
	// input the plan cannot count (Change.Uncounted), each taken as 1:
	// Amount is then a lower bound, and -max-cost is refused.
	Uncounted int
}

// Complete reports whether every generation is priced.
func (e Estimate) Complete() bool { return e.UnpricedImages == 0 && e.UnpricedSeconds == 0 }

// Unit is what a change's generation is priced by.
type Unit uint8

const (
	// UnitImage: each output image (Prices.Image).
	UnitImage Unit = iota
	// UnitMegapixel: each megapixel of each image, its pixels counted in
	// whole millions, rounded up (Prices.Megapixel).
	UnitMegapixel
	// UnitVideoSecond: each second of video (Prices.VideoSecond).
	UnitVideoSecond
	// UnitVideoSecondAt: each second of video at the resolution Rate.Lines
	// (Prices.VideoSecondAt).
	UnitVideoSecondAt
)

// Rate is how a change's generation is priced: Units of Unit at Price
// each; Lines is the resolution of UnitVideoSecondAt.
type Rate struct {
	Unit  Unit
	Price config.Money
	Units int64
	Lines int64
}

// megapixels is how many megapixels an image of w by h pixels is billed
// as: its pixels in millions, rounded up.
func megapixels(w, h int) int64 {
	px := int64(w) * int64(h)
	return (px + 999_999) / 1_000_000
}

// Rate is how the change's generation is priced at prices: by the
// megapixel when prices set one and the model's tables told the size of
// its images, else by the image; by the second at the video's
// resolution when prices set one for it, else by the second. ok is false
// when no price applies (the change is then unpriced).
func (c *Change) Rate(prices *config.Prices) (r Rate, ok bool) {
	if prices == nil {
		return Rate{}, false
	}
	var w, h int
	if c.Model != nil {
		w, h = c.Model.Width, c.Model.Height
	}
	if c.Kind() == addrs.Image {
		if prices.Megapixel != nil && w > 0 && h > 0 {
			return Rate{Unit: UnitMegapixel, Price: *prices.Megapixel, Units: megapixels(w, h) * int64(c.Media)}, true
		}
		if prices.Image == nil {
			return Rate{}, false
		}
		return Rate{Unit: UnitImage, Price: *prices.Image, Units: int64(c.Media)}, true
	}
	seconds := int64(c.Seconds) * int64(c.Media)
	if lines := int64(min(w, h)); lines > 0 {
		if p, ok := prices.VideoSecondAt[lines]; ok {
			return Rate{Unit: UnitVideoSecondAt, Price: p, Units: seconds, Lines: lines}, true
		}
	}
	if prices.VideoSecond == nil {
		return Rate{}, false
	}
	return Rate{Unit: UnitVideoSecond, Price: *prices.VideoSecond, Units: seconds}, true
}

// Cost is what applying the change would cost at prices: ok is false when
// no price of prices applies to it (Rate). A change that makes no
// generation costs 0.
func (c *Change) Cost(prices *config.Prices) (amount config.Money, ok bool) {
	if !c.Action.Generates() || prices == nil {
		return 0, prices != nil
	}
	r, ok := c.Rate(prices)
	if !ok {
		return 0, false
	}
	return r.Price.Times(r.Units), true
}

// PricesOf is what c's generation is priced at: the reference service's
// prices, or its model's on a live provider; nil when none are set.
func (p *Plan) PricesOf(c *Change) *config.Prices {
	if c.Model != nil {
		return c.Model.Prices
	}
	return p.Prices
}

// Priced reports whether the configuration sets any price the plan's
// changes are estimated at: the plan then shows what it costs.
func (p *Plan) Priced() bool { return p.estimateUnit().priced }

// currency is the unit of the plan's estimate: the reference service's
// currency, or the first one a change is priced in.
func (p *Plan) currency() string { return p.estimateUnit().currency }

// Currency is the unit of the plan's estimate; "" when it is not priced.
func (p *Plan) Currency() string { return p.currency() }

// unit is what a plan's estimate is made in.
type unit struct {
	currency string
	priced   bool
}

// estimateUnit finds the plan's unit once (its changes must not change
// after): a view asks for it per change, and finding it reads every change.
func (p *Plan) estimateUnit() unit {
	if u := p.unit.Load(); u != nil {
		return *u
	}
	var u unit
	if p.Prices != nil {
		u = unit{p.Prices.Currency, true}
	} else {
		for _, c := range p.Changes {
			if c.Model != nil && c.Model.Prices != nil {
				u = unit{c.Model.Prices.Currency, true}
				break
			}
		}
	}
	p.unit.Store(&u)
	return u
}

// CostOf is what applying c would cost, in the currency of the plan's
// estimate: ok is false when c's kind has no price there (a price in
// another currency is not converted, so it is not counted either). A
// change that makes no generation costs 0.
func (p *Plan) CostOf(c *Change) (amount config.Money, ok bool) {
	prices := p.PricesOf(c)
	if prices != nil && prices.Currency != p.currency() {
		prices = nil
	}
	if prices == nil {
		return 0, !c.Action.Generates()
	}
	return c.Cost(prices)
}

// Cost estimates what applying the plan would cost at the prices the
// configuration sets; ok is false when it sets none, and a plan then
// shows counts only.
func (p *Plan) Cost() (e Estimate, ok bool) {
	if !p.Priced() {
		return Estimate{}, false
	}
	e.Currency = p.currency()
	for _, c := range p.Changes {
		if !c.Action.Generates() {
			continue
		}
		amount, priced := p.CostOf(c)
		e.AtMost = e.AtMost || c.AtMost
		if c.Uncounted != nil {
			e.Uncounted++
		}
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

// Uncounted lists the generating changes whose count the plan cannot
// bound (Change.Uncounted), in the plan's order.
func (p *Plan) Uncounted() []*Change {
	var out []*Change
	for _, c := range p.Changes {
		if c.Action.Generates() && c.Uncounted != nil {
			out = append(out, c)
		}
	}
	return out
}
