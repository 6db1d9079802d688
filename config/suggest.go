package config

import (
	"sort"
	"strings"

	"github.com/agext/levenshtein"
)

// nameSuggestion returns the candidate closest to given when it is close
// enough to be a likely typo (Terraform's threshold: fewer than three edits),
// and "" otherwise. Candidates are tried in sorted order so the suggestion
// does not depend on map iteration.
func nameSuggestion(given string, candidates []string) string {
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	best, bestDist := "", 3
	for _, c := range sorted {
		if d := levenshtein.Distance(given, c, nil); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// didYouMean formats a suggestion as a sentence to append to a detail, or ""
// when nothing is close.
func didYouMean(given string, candidates []string) string {
	if s := nameSuggestion(given, candidates); s != "" {
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
