package schema

import (
	"fmt"
	"time"
)

// Date is a calendar day as a provider's deprecation page gives it,
// written "2006-01-02"; "" when none is announced.
type Date string

// Time is the day at midnight UTC; ok is false for "" or a malformed
// date (a table test refuses those).
func (d Date) Time() (t time.Time, ok bool) {
	if d == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.DateOnly, string(d))
	return t, err == nil
}

// Day is t's calendar day in UTC, the day a model's dates are compared
// with: the providers give their shutdown dates without a time of day.
func Day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Stage is where a model stands in its provider's lifecycle on a day.
type Stage int

const (
	// Active: the provider announced no retirement.
	Active Stage = iota
	// Retiring: the provider announced its retirement (deprecated it);
	// it still serves it until its shutdown date.
	Retiring
	// Retired: from its shutdown date on, the provider no longer serves
	// it (it is shut down): a request with it makes nothing.
	Retired
)

// StageOn is where the model stands on today's day (its UTC calendar
// day): shut down from its ShutDown date on, deprecated from its
// Deprecated date (or, when that is not given, once a shutdown date is
// announced).
func (c Caps) StageOn(today time.Time) Stage {
	day := Day(today)
	if t, ok := c.ShutDown.Time(); ok && !day.Before(t) {
		return Retired
	}
	if t, ok := c.Deprecated.Time(); ok && !day.Before(t) {
		return Retiring
	}
	if _, ok := c.ShutDown.Time(); ok && c.Deprecated == "" {
		return Retiring
	}
	return Active
}

// DaysLeft is how many days from today's day the model has until its
// shutdown date (0 on that day or after it); ok is false when no
// shutdown date is announced.
func (c Caps) DaysLeft(today time.Time) (days int, ok bool) {
	t, ok := c.ShutDown.Time()
	if !ok {
		return 0, false
	}
	d := int(t.Sub(Day(today)).Hours() / 24)
	return max(d, 0), true
}

// CheckLifecycle reports what is wrong with the model's dates as written
// in a table: a date that does not parse, a shutdown before the
// deprecation, or a deprecation with no shutdown date; "" when nothing
// is. A successor is named only where the provider names one.
func (c Caps) CheckLifecycle() string {
	for _, d := range []Date{c.Deprecated, c.ShutDown} {
		if _, ok := d.Time(); d != "" && !ok {
			return fmt.Sprintf("date %q is not written 2006-01-02", string(d))
		}
	}
	dep, okDep := c.Deprecated.Time()
	shut, okShut := c.ShutDown.Time()
	if okDep && okShut && shut.Before(dep) {
		return fmt.Sprintf("shuts down (%s) before it is deprecated (%s)", c.ShutDown, c.Deprecated)
	}
	if okDep && !okShut {
		return "is deprecated with no shutdown date"
	}
	return ""
}

// Lifecycle says what a model's retirement is, in a few words, for
// genform providers: "deprecated 2026-06-02, shutdown 2026-12-01,
// successor gpt-image-2.6-sunburst or gpt-image-2.6-flare"; "" for a
// model with no retirement announced.
func (c Caps) Lifecycle() string {
	if c.ShutDown == "" {
		return ""
	}
	s := "shutdown " + string(c.ShutDown)
	if c.Deprecated != "" {
		s = "deprecated " + string(c.Deprecated) + ", " + s
	}
	if c.Successor != "" {
		s += ", successor " + c.Successor
	}
	return s
}
