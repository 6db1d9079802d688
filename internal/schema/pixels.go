package schema

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// SizeOf reads a size written as two whole numbers around sep:
// "1536x1024" (sep "x"), "1920:1080" (sep ":"); ok is false for anything
// else ("auto").
func SizeOf(s, sep string) (width, height int, ok bool) {
	a, b, found := strings.Cut(s, sep)
	w, err1 := strconv.Atoi(a)
	h, err2 := strconv.Atoi(b)
	if !found || err1 != nil || err2 != nil || w <= 0 || h <= 0 {
		return 0, 0, false
	}
	return w, h, true
}

// FrameOf is the size of a frame whose short side is lines, in the shape
// of aspect ("16:9", "9:16", "1:1"): 1280 by 720 for 720 lines at 16:9.
// The long side is rounded to an even number of pixels, as video frames
// are. ok is false for an aspect ratio that is not two whole numbers.
func FrameOf(lines int, aspect string) (width, height int, ok bool) {
	a, b, ok := SizeOf(aspect, ":")
	if !ok || lines <= 0 {
		return 0, 0, false
	}
	short, long := min(a, b), max(a, b)
	longSide := (lines*long/short + 1) &^ 1
	if a >= b {
		return longSide, lines, true
	}
	return lines, longSide, true
}

// LinesOf reads a resolution as the providers write it ("720p", "1080p",
// "4k"): the lines of the frame's short side; ok is false for anything
// else.
func LinesOf(s string) (int, bool) {
	s = strings.ToLower(s)
	if s == "4k" {
		return 2160, true
	}
	n, err := strconv.Atoi(strings.TrimSuffix(s, "p"))
	if err != nil || !strings.HasSuffix(s, "p") || n <= 0 {
		return 0, false
	}
	return n, true
}

// WholeValue reads a JSON-shaped number as a whole number: a float64 (as
// encoding/json decodes it), a json.Number (as the configuration hands
// the common attributes to Body), or an int.
func WholeValue(v any) (int64, bool) {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case json.Number:
		x, err := n.Float64()
		if err != nil {
			return 0, false
		}
		f = x
	case int:
		return int64(n), true
	case int64:
		return n, true
	default:
		return 0, false
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}
