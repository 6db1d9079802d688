package views

import "github.com/genform/genform/internal/worddiff"

// wordOp is one piece of a word diff (package worddiff, which the
// gallery's before-and-after shares).
type wordOp = worddiff.Op

// wordDiff compares two texts word by word, which is how a reviewer
// reads a prompt change.
func wordDiff(a, b string) []wordOp { return worddiff.Diff(a, b) }

// renderWordDiff renders ops with markers: [-removed-] {+added+}, the
// format of git's --word-diff=plain, readable without colour.
func renderWordDiff(ops []wordOp, del, add func(string) string) string {
	return worddiff.Render(ops, del, add)
}
