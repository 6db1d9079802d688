package config

import (
	"sort"
	"strings"

	"github.com/agext/levenshtein"
)

// Suggest returns the candidate closest to given when it is close enough
// to be a likely typo (Terraform's threshold: fewer than three edits), and
// "" otherwise. Of equally close candidates the first one wins, so callers
// pass them in the order they are shown in (addresses in address order).
func Suggest(given string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := levenshtein.Distance(given, c, nil); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
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
