package config

import "testing"

func TestSuggest(t *testing.T) {
	for _, tc := range []struct {
		given      string
		candidates []string
		want       string
	}{
		// A typo of a name is suggested.
		{"promt", []string{"prompt"}, "prompt"},
		{"output", []string{"generation_id", "id", "outputs", "status"}, "outputs"},
		{"stlye", []string{"style"}, "style"}, // neighbours swapped: one edit
		{"16/9", []string{"21:9", "16:9"}, "16:9"},
		{"ss", []string{"s"}, "s"},
		{"img", []string{"image"}, "image"},
		{"heor", []string{"hero", "hera"}, "hero"},
		{"plna", []string{"apply", "plan"}, "plan"},
		// The closest wins; of equally close ones, the first.
		{"hera", []string{"heros", "hero", "here"}, "hero"},
		// A name as long as the distance is another name, not a typo.
		{"c", []string{"a"}, ""},
		{"c", []string{"a", "b", "cc"}, ""},
		{"ab", []string{"xy"}, ""},
		// More than a third of the longer name changed.
		{"abc", []string{"axy"}, ""},
		{"cat", []string{"dog"}, ""},
		{"x", []string{"xyz"}, ""},
		// Three edits are too many, however long the names.
		{"background_image", []string{"background_video"}, ""},
		// Characters, not bytes: one edit of four.
		{"héro", []string{"hero"}, "hero"},
		{"hero", []string{"hero"}, "hero"},
		{"anything", nil, ""},
	} {
		if got := Suggest(tc.given, tc.candidates); got != tc.want {
			t.Errorf("Suggest(%q, %q) = %q, want %q", tc.given, tc.candidates, got, tc.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"kitten", "sitting", 3},
		{"stlye", "style", 1},
		{"ab", "ba", 1},
		{"ca", "abc", 3}, // optimal string alignment: no edit of a swapped pair
		{"héro", "hero", 1},
	} {
		if got := editDistance([]rune(tc.a), []rune(tc.b)); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := editDistance([]rune(tc.b), []rune(tc.a)); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
}
