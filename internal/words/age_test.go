package words

import (
	"testing"
	"time"
)

// An age is said in the largest unit that fits, "just now" only under a
// minute, and a time a clock ahead of this one set is given as it is.
func TestAgeAt(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		ago  time.Duration
		want string
	}{
		{0, "just now"},
		{59 * time.Second, "just now"},
		{time.Minute, "1 minute ago"},
		{90 * time.Second, "1 minute ago"},
		{3 * time.Minute, "3 minutes ago"},
		{59*time.Minute + 59*time.Second, "59 minutes ago"},
		{time.Hour, "1 hour ago"},
		{2*time.Hour + 30*time.Minute, "2 hours ago"},
		{47 * time.Hour, "47 hours ago"},
		{48 * time.Hour, "2 days ago"},
		{400 * 24 * time.Hour, "400 days ago"},
		{-30 * time.Second, "just now"},
		{-2 * time.Hour, "at 2026-11-26 14:00:00Z"},
	} {
		if got := AgeAt(now.Add(-c.ago), now); got != c.want {
			t.Errorf("%s ago: %q, want %q", c.ago, got, c.want)
		}
	}
	if got := AgeAt(time.Time{}, now); got != "at an unknown time" {
		t.Errorf("the zero time: %q", got)
	}
	// A time in another zone is the same instant.
	at := now.Add(-3 * time.Minute).In(time.FixedZone("UTC+9", 9*3600))
	if got := AgeAt(at, now); got != "3 minutes ago" {
		t.Errorf("3 minutes ago in another zone: %q", got)
	}
}
