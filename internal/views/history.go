package views

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/history"
	"github.com/genform/genform/internal/secrets"
	"github.com/genform/genform/internal/words"
	"github.com/genform/genform/statefile"
)

// writeHistory writes entries grouped by the instance that held them
// last, newest first within each.
func writeHistory(w io.Writer, h *history.View, entries []*statefile.Resource) {
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
		group := byAddr[addr]
		differ := historyDiffers(group)
		for _, e := range group {
			counts[h.State(e)]++
			fmt.Fprintf(w, "  %s\n", historyLine(h, e, addr, differ))
		}
	}
	fmt.Fprintf(w, "\n%d generation%s: %d held, %d restorable, %d failed",
		len(entries), words.Plural(len(entries)), counts["held"], counts["restorable"], counts["failed"])
	if n := counts["unrestorable"]; n > 0 {
		fmt.Fprintf(w, ", %d unrestorable", n)
	}
	fmt.Fprintln(w, ".")
}

// historyDiffers names the request attributes, the prompt aside (every
// line shows it), whose values are not the same in every one of entries,
// in the order a plan lists them: the entries of one instance that differ
// only in those (a video made from another source_image) would otherwise
// read alike.
func historyDiffers(entries []*statefile.Resource) []string {
	if len(entries) < 2 {
		return nil
	}
	var first map[string]string
	differ := map[string]bool{}
	for i, e := range entries {
		enc := map[string]string{}
		for name, v := range secrets.RecordAttrs(e) {
			if b, err := json.Marshal(v); err == nil {
				enc[name] = string(b)
			}
		}
		if i == 0 {
			first = enc
			continue
		}
		for name, v := range enc {
			if first[name] != v {
				differ[name] = true
			}
		}
		for name := range first {
			if _, ok := enc[name]; !ok {
				differ[name] = true
			}
		}
	}
	delete(differ, "prompt")
	names := make([]string, 0, len(differ))
	for name := range differ {
		names = append(names, name)
	}
	config.SortAttrNames(names)
	return names
}

// historyLine is one entry in one line: when, what can be done with it,
// the job, the prompt and the attributes named in differ (those that tell
// it from the instance's other entries), and for a restorable one where
// its files would come from.
func historyLine(h *history.View, e *statefile.Resource, addr addrs.Instance, differ []string) string {
	state := h.State(e)
	rh := h.Hide(e)
	s := fmt.Sprintf("%s  %-12s job %s", e.CreatedAt.UTC().Format("2006-01-02 15:04:05Z"), state, e.GenerationID)
	attrs := secrets.RecordAttrs(e)
	if p, ok := attrs["prompt"].(string); ok {
		if rh.Hides("prompt") || rh.Text(p) != p {
			s += "  prompt " + secrets.Text
		} else {
			s += fmt.Sprintf("  prompt %q", p)
		}
	}
	if len(differ) > 0 {
		shown := rh.Attrs(attrs, secrets.Value{})
		for _, name := range differ {
			s += "  " + name + " " + historyValue(shown[name])
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

// historyValue is an attribute's value in a history line. A long string
// (a data: URI) is cut as in a plan, with its length and the start of its
// sha256: two source images whose first bytes are alike still read apart.
func historyValue(v any) string {
	if str, ok := v.(string); ok && len(str) > 120 {
		sum := sha256.Sum256([]byte(str))
		return strconv.Quote(str[:60]+"…") + fmt.Sprintf(" (%d bytes, sha256 %x)", len(str), sum[:6])
	}
	return FormatValue(v)
}

// compactJSON is a provider's JSON on one line, as received otherwise.
func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return strconv.Quote(string(raw))
	}
	return b.String()
}
