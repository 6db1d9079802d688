//go:build !linux

package boltstate

import "time"

// processStart cannot tell here: a pid that runs is taken for the
// writer's.
func processStart(pid int) (time.Time, bool) { return time.Time{}, false }
