package config

import (
	"math"
	"testing"
)

func TestMoney(t *testing.T) {
	for _, tc := range []struct {
		in, out string
		err     bool
	}{
		{in: "0.28", out: "0.28"},
		{in: "12", out: "12.00"},
		{in: "0.0125", out: "0.0125"},
		{in: " 5.5 ", out: "5.50"},
		{in: "0", out: "0.00"},
		{in: "0.000001", out: "0.000001"},
		{in: "0.0000001", err: true},
		{in: "-1", err: true},
		{in: "1e3", err: true},
		{in: "1/3", err: true},
		{in: "ten", err: true},
		{in: "", err: true},
		{in: "99999999999999", err: true},
	} {
		m, err := ParseMoney(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("ParseMoney(%q) error = %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if err == nil && m.String() != tc.out {
			t.Errorf("ParseMoney(%q) = %s, want %s", tc.in, m, tc.out)
		}
	}
}

func TestMoneySums(t *testing.T) {
	cent, _ := ParseMoney("0.01")
	var sum Money
	for range 30 {
		sum = sum.Plus(cent.Times(1))
	}
	if sum.String() != "0.30" {
		t.Errorf("thirty cents add up to %s", sum)
	}
	if got := cent.Times(0); got != 0 {
		t.Errorf("0 × 0.01 = %s", got)
	}
	if got := Money(math.MaxInt64 / 2).Times(3); got != math.MaxInt64 {
		t.Errorf("an overflowing product is %d, want it saturated", got)
	}
	if got := Money(math.MaxInt64 - 1).Plus(5); got != math.MaxInt64 {
		t.Errorf("an overflowing sum is %d, want it saturated", got)
	}
}
