// Package jsonapply is what apply -json and destroy -json print: one JSON
// object a line, a "progress" line per event of the run (phase, status,
// progress, retries) and a closing "result" line listing what was
// generated, resumed, restored, updated, moved, deleted, failed or
// skipped. Scripts rely on it; fields are only ever added.
//
// Messages are written with package words. It encodes the engine's
// events and result and decides nothing; the human progress (bars and
// plain lines) is the views'.
package jsonapply
