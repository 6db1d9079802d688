package schema

import (
	"strings"
	"testing"
	"time"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// A model is deprecated from its notice, shut down from its shutdown day
// (that day included, in UTC), and counts its days left to it.
func TestStageOn(t *testing.T) {
	c := Caps{Deprecated: "2026-06-02", ShutDown: "2026-12-01", Successor: "x"}
	for _, tt := range []struct {
		today time.Time
		stage Stage
		left  int
	}{
		{day("2026-06-01"), Active, 183},
		{day("2026-06-02"), Retiring, 182},
		{day("2026-11-01"), Retiring, 30},
		{day("2026-11-30").Add(23*time.Hour + 59*time.Minute), Retiring, 1},
		{day("2026-12-01"), Retired, 0},
		{day("2026-12-07"), Retired, 0},
		// 2026-11-30 at 20:00 in New York is 2026-12-01 in UTC.
		{time.Date(2026, 11, 30, 20, 0, 0, 0, time.FixedZone("EST", -5*3600)), Retired, 0},
	} {
		if got := c.StageOn(tt.today); got != tt.stage {
			t.Errorf("StageOn(%s) = %v, want %v", tt.today, got, tt.stage)
		}
		if got, ok := c.DaysLeft(tt.today); !ok || got != tt.left {
			t.Errorf("DaysLeft(%s) = %d %v, want %d", tt.today, got, ok, tt.left)
		}
	}
	if s := (Caps{}).StageOn(day("2030-01-01")); s != Active {
		t.Errorf("a model with no dates: %v", s)
	}
	if _, ok := (Caps{}).DaysLeft(day("2030-01-01")); ok {
		t.Error("a model with no shutdown has days left")
	}
	// A shutdown announced without a notice day is deprecated until it.
	if s := (Caps{ShutDown: "2026-10-23"}).StageOn(day("2026-01-01")); s != Retiring {
		t.Errorf("a shutdown to come without a notice day: %v", s)
	}
}

func TestCheckLifecycle(t *testing.T) {
	for _, tt := range []struct {
		caps Caps
		want string
	}{
		{Caps{}, ""},
		{Caps{Deprecated: "2026-06-02", ShutDown: "2026-12-01", Successor: "a or b"}, ""},
		{Caps{ShutDown: "2026-10-23"}, ""},
		{Caps{ShutDown: "2026-12-1"}, "not written 2006-01-02"},
		{Caps{Deprecated: "June 2", ShutDown: "2026-12-01"}, "not written 2006-01-02"},
		{Caps{Deprecated: "2026-12-02", ShutDown: "2026-12-01"}, "before it is deprecated"},
		{Caps{Deprecated: "2026-06-02"}, "no shutdown date"},
	} {
		got := tt.caps.CheckLifecycle()
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%+v: %q, want %q", tt.caps, got, tt.want)
		}
	}
	c := Caps{Deprecated: "2026-06-02", ShutDown: "2026-12-01", Successor: "a or b"}
	if got := c.Lifecycle(); got != "deprecated 2026-06-02, shutdown 2026-12-01, successor a or b" {
		t.Errorf("Lifecycle: %q", got)
	}
	if got := (Caps{}).Lifecycle(); got != "" {
		t.Errorf("no lifecycle: %q", got)
	}
}
