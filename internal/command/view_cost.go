package command

import (
	"fmt"
	"strings"

	"github.com/genform/genform/config"
	"github.com/genform/genform/reconcile/plans"
)

// costLine is the plan's estimate, e.g. "Estimated cost: 0.28 USD (12
// images at 0.02, 8 video seconds at 0.05)." It is "" when the
// configuration sets no prices: a plan then shows counts only.
func costLine(p *plans.Plan) string {
	e, ok := p.Cost()
	if !ok {
		return ""
	}
	var parts []string
	if n := e.Images - e.UnpricedImages; n > 0 {
		parts = append(parts, fmt.Sprintf("%d image%s at %s", n, plural(n), p.Prices.Image))
	}
	if n := e.VideoSeconds - e.UnpricedSeconds; n > 0 {
		parts = append(parts, fmt.Sprintf("%d video second%s at %s", n, plural(n), p.Prices.VideoSecond))
	}
	line := fmt.Sprintf("Estimated cost: %s %s", e.Amount, e.Currency)
	if !e.Complete() {
		line = fmt.Sprintf("Estimated cost: at least %s %s", e.Amount, e.Currency)
	}
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	if !e.Complete() {
		var missing []string
		if e.UnpricedImages > 0 {
			missing = append(missing, fmt.Sprintf("%d image%s without a price: set prices.image", e.UnpricedImages, plural(e.UnpricedImages)))
		}
		if e.UnpricedSeconds > 0 {
			missing = append(missing, fmt.Sprintf("%d video second%s without a price: set prices.video_second", e.UnpricedSeconds, plural(e.UnpricedSeconds)))
		}
		line += "; " + strings.Join(missing, "; ") + " in the service block"
	}
	return line + "."
}

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
	return amount.String() + " " + p.Prices.Currency
}

// costJSON is the estimate in the plan document's summary, present only
// when the configuration sets prices. Amounts are decimal strings, exact
// as the sums are kept.
type costJSON struct {
	Amount          string `json:"amount"`
	Currency        string `json:"currency"`
	Complete        bool   `json:"complete"`
	Images          int    `json:"images"`
	VideoSeconds    int    `json:"video_seconds"`
	UnpricedImages  int    `json:"unpriced_images,omitempty"`
	UnpricedSeconds int    `json:"unpriced_video_seconds,omitempty"`
}

// costDocument is the plan's estimate for the plan document, nil without
// prices.
func costDocument(p *plans.Plan) *costJSON {
	e, ok := p.Cost()
	if !ok {
		return nil
	}
	return &costJSON{
		Amount: e.Amount.String(), Currency: e.Currency, Complete: e.Complete(),
		Images: e.Images, VideoSeconds: e.VideoSeconds,
		UnpricedImages: e.UnpricedImages, UnpricedSeconds: e.UnpricedSeconds,
	}
}

// pricesJSON are the prices a saved plan was made with, so that showing
// and applying it estimate the same cost.
type pricesJSON struct {
	Image       string `json:"image,omitempty"`
	VideoSecond string `json:"video_second,omitempty"`
	Currency    string `json:"currency"`
}

func encodePrices(p *config.Prices) *pricesJSON {
	if p == nil {
		return nil
	}
	pj := &pricesJSON{Currency: p.Currency}
	if p.Image != nil {
		pj.Image = p.Image.String()
	}
	if p.VideoSecond != nil {
		pj.VideoSecond = p.VideoSecond.String()
	}
	return pj
}

func decodePrices(pj *pricesJSON) (*config.Prices, error) {
	if pj == nil {
		return nil, nil
	}
	p := &config.Prices{Currency: pj.Currency}
	for _, f := range []struct {
		s   string
		dst **config.Money
	}{{pj.Image, &p.Image}, {pj.VideoSecond, &p.VideoSecond}} {
		if f.s == "" {
			continue
		}
		m, err := config.ParseMoney(f.s)
		if err != nil {
			return nil, fmt.Errorf("prices: %w", err)
		}
		*f.dst = &m
	}
	return p, nil
}

// checkMaxCost refuses a plan whose estimate is above -max-cost, or that
// cannot be estimated: a limit on money is never checked against a
// guess.
func checkMaxCost(p *plans.Plan, limit string) error {
	if limit == "" {
		return nil
	}
	max, err := config.ParseMoney(limit)
	if err != nil {
		return fmt.Errorf("-max-cost: %v", err)
	}
	e, ok := p.Cost()
	if !ok {
		return fmt.Errorf("-max-cost=%s needs the service's prices to estimate the cost, and the configuration sets none; set prices = { image = ..., video_second = ... } in the service block. Nothing was submitted", limit)
	}
	if !e.Complete() {
		return fmt.Errorf("-max-cost=%s cannot be checked: %s Nothing was submitted", limit, strings.TrimPrefix(costLine(p), "Estimated cost: "))
	}
	if e.Amount > max {
		return fmt.Errorf("this apply would cost an estimated %s %s, more than -max-cost=%s %s allows; nothing was submitted. Narrow it with -target or raise the limit", e.Amount, e.Currency, max, e.Currency)
	}
	return nil
}
