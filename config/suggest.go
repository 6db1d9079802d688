package config

import (
	"sort"
	"strings"
)

// Suggest returns the candidate closest to given when it is close enough
// to be a likely typo, and "" otherwise. Of equally close candidates the
// first one wins, so callers pass them in the order they are shown in
// (addresses in address order).
//
// Closeness is the number of edits (a letter added, removed or changed, or
// two neighbours swapped) between the two. A candidate is suggested only
// when that number is
//
//   - below 3, Terraform's threshold;
//   - below the length of given: a name that would have to be wholly
//     retyped, such as "a" for "c", is another name, not a typo of it;
//   - at most a third of the longer name, rounded up: two edits make
//     "img" of "image", but "cat" of "dog".
//
// Lengths count characters, not bytes. A candidate equal to given is
// returned as it is.
func Suggest(given string, candidates []string) string {
	best, bestDist := "", 3
	g := []rune(given)
	for _, c := range candidates {
		cr := []rune(c)
		d := editDistance(g, cr)
		if d >= bestDist || d > 0 && (d >= len(g) || 3*d > max(len(g), len(cr))+2) {
			continue
		}
		best, bestDist = c, d
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// Levenshtein's insertions, deletions and substitutions, and a swap of two
// neighbours counted as one edit, the commonest typo ("stlye").
func editDistance(a, b []rune) int {
	// Three rows of the table: two back, the one before, this one.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// didYouMean formats a suggestion as a sentence to append to a detail, or ""
// when nothing is close.
// Candidates are tried in sorted order, so the suggestion does not
// depend on map iteration.
func didYouMean(given string, candidates []string) string {
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	if s := Suggest(given, sorted); s != "" {
		return " Did you mean " + quote(s) + "?"
	}
	return ""
}

func quote(s string) string { return `"` + s + `"` }

// article is "An" before "image" and "A" before "video".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "An"
	}
	return "A"
}
