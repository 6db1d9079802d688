package config

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Money is an amount of a currency in millionths of its unit, so that
// prices such as 0.02 add up exactly: a plan's estimate is a sum of many
// small prices, and floating point would show 0.30000000000000004.
type Money int64

// moneyScale is the number of Money in one currency unit.
const moneyScale = 1_000_000

// maxMoney bounds a price or a limit, far above any real generation's
// price, so that sums of a large plan cannot overflow.
const maxMoney = Money(1_000_000_000 * moneyScale)

// ParseMoney reads a decimal amount such as "0.28", "12" or "0.0125": not
// negative, at most six decimal places.
func ParseMoney(s string) (Money, error) {
	r, ok := new(big.Rat).SetString(strings.TrimSpace(s))
	if !ok || strings.ContainsAny(s, "eE/") {
		return 0, fmt.Errorf("%q is not an amount; write a decimal number such as 0.25", s)
	}
	return moneyOfRat(r)
}

// moneyOfRat is r as Money, refusing what Money cannot hold exactly.
func moneyOfRat(r *big.Rat) (Money, error) {
	if r.Sign() < 0 {
		return 0, fmt.Errorf("%s is negative", r.FloatString(6))
	}
	m := new(big.Rat).Mul(r, big.NewRat(moneyScale, 1))
	if !m.IsInt() {
		return 0, fmt.Errorf("%s has more than six decimal places", strings.TrimRight(r.FloatString(12), "0"))
	}
	if !m.Num().IsInt64() || m.Num().Int64() > int64(maxMoney) {
		return 0, fmt.Errorf("%s is more than %s", r.FloatString(2), maxMoney)
	}
	return Money(m.Num().Int64()), nil
}

// String is the amount with at least two decimal places and no trailing
// zeros past them: "0.28", "12.00", "0.0125".
func (m Money) String() string {
	s := strconv.FormatInt(int64(m)/moneyScale, 10) + "." + fmt.Sprintf("%06d", int64(m)%moneyScale)
	s = strings.TrimRight(s, "0")
	if i := strings.IndexByte(s, '.'); len(s)-i-1 < 2 {
		s += strings.Repeat("0", 2-(len(s)-i-1))
	}
	return s
}

// Times is m multiplied by n, saturating rather than overflowing.
func (m Money) Times(n int64) Money {
	if n <= 0 || m == 0 {
		return 0
	}
	if int64(m) > math.MaxInt64/n {
		return math.MaxInt64
	}
	return Money(int64(m) * n)
}

// Plus is m + o, saturating rather than overflowing.
func (m Money) Plus(o Money) Money {
	if int64(m) > math.MaxInt64-int64(o) {
		return math.MaxInt64
	}
	return m + o
}

// Prices are what the service charges, from service { prices = {...} },
// for estimating what a plan costs. A price that is not set is nil: its
// outputs are counted, never priced at a made-up zero.
type Prices struct {
	// Image is the price of one output image.
	Image *Money
	// VideoSecond is the price of one second of video.
	VideoSecond *Money
	// Megapixel is the price of one megapixel of an output image, for a
	// live provider that bills images by their size (fal's FLUX: "Images
	// are billed by rounding up to the nearest megapixel"): each image is
	// counted in whole megapixels of a million pixels, rounded up, at the
	// size the model's tables read from its request. It is used in place
	// of Image wherever the tables know that size.
	Megapixel *Money
	// VideoSecondAt are the prices of one second of video by resolution
	// (the short side in lines: 720, 1080, 2160 for 4k), from
	// video_second = { "720p" = 0.2, "1080p" = 0.4 }: used in place of
	// VideoSecond where the model's tables read the video's resolution
	// from its request and a price is set for it.
	VideoSecondAt map[int64]Money
	// Currency names the unit of the prices ("USD" unless set).
	Currency string
}
