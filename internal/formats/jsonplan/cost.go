package jsonplan

import (
	"fmt"

	"github.com/genform/genform/config"
	"github.com/genform/genform/reconcile/plans"
)

// Cost is the estimate in the plan document's summary, present only
// when the configuration sets prices. Amounts are decimal strings, exact
// as the sums are kept.
type Cost struct {
	Amount          string `json:"amount"`
	Currency        string `json:"currency"`
	Complete        bool   `json:"complete"`
	Images          int    `json:"images"`
	VideoSeconds    int    `json:"video_seconds"`
	UnpricedImages  int    `json:"unpriced_images,omitempty"`
	UnpricedSeconds int    `json:"unpriced_video_seconds,omitempty"`
	// AtMost is true when a count or a duration is known only after apply
	// and was taken at the most the service allows: Amount is then an
	// upper bound.
	AtMost bool `json:"at_most,omitempty"`
	// Uncounted is how many generations have a count field in their
	// input the plan cannot count, each taken as 1 (the change's
	// "uncounted" names it): Amount is then a lower bound.
	Uncounted int `json:"uncounted,omitempty"`
}

// encodeCost is the plan's estimate for the plan document, nil without
// prices.
func encodeCost(p *plans.Plan) *Cost {
	e, ok := p.Cost()
	if !ok {
		return nil
	}
	return &Cost{
		Amount: e.Amount.String(), Currency: e.Currency, Complete: e.Complete(),
		Images: e.Images, VideoSeconds: e.VideoSeconds,
		UnpricedImages: e.UnpricedImages, UnpricedSeconds: e.UnpricedSeconds, AtMost: e.AtMost, Uncounted: e.Uncounted,
	}
}

// Prices are the prices a plan's cost is estimated at, as the saved
// plan file keeps them (and a change's model_prices): apply and show
// estimate at the configuration's, and refuse a file whose prices are
// not those.
type Prices struct {
	Image       string `json:"image,omitempty"`
	VideoSecond string `json:"video_second,omitempty"`
	// Megapixel is the price of one megapixel of an image, and
	// VideoSecondAt the price of one second of video by resolution
	// ("720p", "4k"); absent when not set.
	Megapixel     string            `json:"megapixel,omitempty"`
	VideoSecondAt map[string]string `json:"video_second_at,omitempty"`
	Currency      string            `json:"currency"`
}

func EncodePrices(p *config.Prices) *Prices {
	if p == nil {
		return nil
	}
	pj := &Prices{Currency: p.Currency}
	if p.Image != nil {
		pj.Image = p.Image.String()
	}
	if p.VideoSecond != nil {
		pj.VideoSecond = p.VideoSecond.String()
	}
	if p.Megapixel != nil {
		pj.Megapixel = p.Megapixel.String()
	}
	if len(p.VideoSecondAt) > 0 {
		pj.VideoSecondAt = map[string]string{}
		for lines, m := range p.VideoSecondAt {
			pj.VideoSecondAt[resolutionKey(lines)] = m.String()
		}
	}
	return pj
}

// resolutionKey names a resolution as prices key it: "1080p", "4k".
func resolutionKey(lines int64) string {
	if lines == 2160 {
		return "4k"
	}
	return fmt.Sprintf("%dp", lines)
}

func DecodePrices(pj *Prices) (*config.Prices, error) {
	if pj == nil {
		return nil, nil
	}
	p := &config.Prices{Currency: pj.Currency}
	for _, f := range []struct {
		s   string
		dst **config.Money
	}{{pj.Image, &p.Image}, {pj.VideoSecond, &p.VideoSecond}, {pj.Megapixel, &p.Megapixel}} {
		if f.s == "" {
			continue
		}
		m, err := config.ParseMoney(f.s)
		if err != nil {
			return nil, fmt.Errorf("prices: %w", err)
		}
		*f.dst = &m
	}
	for res, s := range pj.VideoSecondAt {
		lines, ok := config.ParseResolution(res)
		m, err := config.ParseMoney(s)
		if !ok || err != nil {
			return nil, fmt.Errorf("prices: video_second_at %q: %q is not a price of a resolution", res, s)
		}
		if p.VideoSecondAt == nil {
			p.VideoSecondAt = map[int64]config.Money{}
		}
		p.VideoSecondAt[lines] = m
	}
	return p, nil
}
