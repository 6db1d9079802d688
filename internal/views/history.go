package views

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/history"
	"github.com/genform/genform/internal/secrets"
	"github.com/genform/genform/internal/words"
	"github.com/genform/genform/statefile"
)

// History writes entries grouped by the instance that held them
// last, newest first within each.
func History(w io.Writer, h *history.View, entries []*statefile.Resource) {
	byAddr := map[addrs.Instance][]*statefile.Resource{}
	for _, e := range entries {
		byAddr[e.Addr] = append(byAddr[e.Addr], e)
	}
	counts := map[string]int{}
	for i, addr := range addrs.SortedKeys(byAddr) {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, colBold.Sprint("# "+addr.String()))
		for _, e := range byAddr[addr] {
			counts[h.State(e)]++
			fmt.Fprintf(w, "  %s\n", HistoryLine(h, e, addr))
		}
	}
	fmt.Fprintf(w, "\n%d generation%s: %d held, %d restorable, %d failed",
		len(entries), words.Plural(len(entries)), counts["held"], counts["restorable"], counts["failed"])
	if n := counts["unrestorable"]; n > 0 {
		fmt.Fprintf(w, ", %d unrestorable", n)
	}
	fmt.Fprintln(w, ".")
}

// line is one entry in one line: when, what can be done with it, the job,
// the prompt, and for a restorable one where its files would come from.
func HistoryLine(h *history.View, e *statefile.Resource, addr addrs.Instance) string {
	state := h.State(e)
	rh := h.Hide(e)
	s := fmt.Sprintf("%s  %-12s job %s", e.CreatedAt.UTC().Format("2006-01-02 15:04:05Z"), state, e.GenerationID)
	if p, ok := secrets.RecordAttrs(e)["prompt"].(string); ok {
		if rh.Hides("prompt") || rh.Text(p) != p {
			s += "  prompt " + secrets.Text
		} else {
			s += fmt.Sprintf("  prompt %q", p)
		}
	}
	if e.Version != "" {
		s += "  version " + e.Version
	}
	if len(e.Usage) > 0 {
		s += "  usage " + compactJSON(e.Usage)
	}
	switch state {
	case "held":
		if held := h.HeldBy(e.GenerationID); held != addr {
			s += " (held by " + held.String() + ")"
		}
	case "restorable":
		if h.Cached(e) {
			s += " (files in the cache)"
		} else {
			s += " (files downloaded again by creation id)"
		}
	case "failed":
		if e.Error != "" {
			s += ": " + rh.Text(e.Error)
		}
	}
	return s
}

// compactJSON is a provider's JSON on one line, as received otherwise.
func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return strconv.Quote(string(raw))
	}
	return b.String()
}
