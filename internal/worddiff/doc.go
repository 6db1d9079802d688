// Package worddiff compares two texts word by word, the way a reviewer
// reads a prompt change: the plan's views (package views) and the
// gallery's before-and-after (package gallery) show the same diff. It is
// a leaf: it imports nothing of the module.
package worddiff
