package views

import (
	"fmt"
	"io"
	"strconv"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/formats/jsonstate"
	"github.com/genform/genform/internal/secrets"
	"github.com/genform/genform/reconcile/plans"
	"github.com/genform/genform/statefile"
)

// The human views of the state: show and state show. The JSON document of
// show -json is package jsonstate's.

// writeStateSummary writes the human view of the whole state: for each
// resource what a user looks for first (status, creation id, prompt,
// files and whether the object store holds them), and the submissions an
// apply left unfinished. store is whether an object store is configured.
func writeStateSummary(w io.Writer, snap *statefile.Snapshot, h *secrets.Hider, store bool) {
	recorded := addrs.SortedKeys(snap.Resources)
	// With an object store configured (store), or once files went to
	// one, each instance says whether the store holds its files, as
	// recorded at upload.
	storing := store
	for _, rec := range snap.Resources {
		if storing {
			break
		}
		storing = plans.StoreOf(rec.Outputs) > plans.StoreNone
	}
	for i, addr := range recorded {
		rec := snap.Resources[addr]
		rh := h.Of(rec)
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n%s %q {\n", colBold.Sprint("# "+addr.String()+":"), addr.Resource.Kind, addr.Resource.Name)
		var rows []attrRow
		rows = append(rows, attrRow{"status", FormatValue(rec.Status)}, attrRow{"creation_id", FormatValue(rec.CreationID)})
		if p, ok := rh.Attrs(secrets.RecordAttrs(rec), secrets.Value{})["prompt"]; ok {
			rows = append(rows, attrRow{"prompt", FormatValue(p)})
		}
		files := make([]any, 0, len(rec.Outputs))
		for _, o := range rec.Outputs {
			files = append(files, o.Path)
		}
		rows = append(rows, attrRow{"files", FormatValue(files)})
		if storing {
			rows = append(rows, attrRow{"in_store", inStore(rec.Outputs)})
		}
		if snap.Protections[addr] {
			rows = append(rows, attrRow{"protected", "true"})
		}
		if f := rec.Failure; f != nil {
			rows = append(rows, attrRow{"last_failure", FormatValue(failureNote(f, rh))})
		}
		writeRows(w, "    ", rows)
		fmt.Fprintln(w, "}")
	}
	pending := pendingIntents(snap)
	if len(pending) > 0 && len(recorded) > 0 {
		fmt.Fprintln(w)
	}
	for _, it := range pending {
		fmt.Fprintf(w, "%s %s\n", colBold.Sprint("# "+it.Addr.String()+":"), IntentNote(it))
	}
}

// inStore says how many of outs the object store holds: true (all),
// false (none), or "N of M files".
func inStore(outs []statefile.Output) string {
	switch plans.StoreOf(outs) {
	case plans.StoreAll:
		return "true"
	case plans.StoreSome:
		n := 0
		for _, o := range outs {
			if o.Stored {
				n++
			}
		}
		return FormatValue(fmt.Sprintf("%d of %d files", n, len(outs)))
	}
	return "false"
}

// pendingIntents are the intents of addresses without a record, which
// the summary lists on their own; an intent beside a record is shown with
// the record.
func pendingIntents(snap *statefile.Snapshot) []*statefile.Intent {
	var list []*statefile.Intent
	for _, addr := range addrs.SortedKeys(snap.Intents) {
		if snap.Resources[addr] == nil {
			list = append(list, snap.Intents[addr])
		}
	}
	return list
}

// IntentNote says what an intent is. The state it is read from may be
// that of an apply still running (readers do not wait for it), whose
// intents are its jobs in flight; or the apply was interrupted. The note
// cannot tell which, and says both.
func IntentNote(it *statefile.Intent) string {
	if it.GenerationID == "" {
		return fmt.Sprintf("an apply sent a create request at %s and has not recorded the answer: it is being sent now, or that apply was interrupted", it.CreatedAt.UTC().Format("2006-01-02 15:04:05Z"))
	}
	return fmt.Sprintf("job %s is not finished: the apply that submitted it follows it if it still runs, or the next apply resumes it", it.GenerationID)
}

// writeResource writes every attribute of one record (show ADDR, state
// show ADDR): the request as the configuration names its attributes, the
// service's ids, where the files are and their hashes, and with an object
// store configured (store) whether it holds each file. What h hides shows
// as (sensitive).
func writeResource(w io.Writer, snap *statefile.Snapshot, addr addrs.Instance, h *secrets.Hider, store bool) {
	rec := snap.Resources[addr]
	rh := h.Of(rec)
	fmt.Fprintf(w, "%s\n%s %q {\n", colBold.Sprint("# "+addr.String()+":"), addr.Resource.Kind, addr.Resource.Name)
	rows := []attrRow{
		{"creation_id", FormatValue(rec.CreationID)},
		{"generation_id", FormatValue(rec.GenerationID)},
		{"status", FormatValue(rec.Status)},
	}
	if rec.Error != "" {
		rows = append(rows, attrRow{"error", FormatValue(rh.Text(rec.Error))})
	}
	rows = append(rows, attrRow{"endpoint", FormatValue(rec.Endpoint.Path())})
	if rec.Version != "" {
		rows = append(rows, attrRow{"version", FormatValue(rec.Version)})
	}
	if len(rec.Usage) > 0 {
		rows = append(rows, attrRow{"usage", compactJSON(rec.Usage)})
	}
	attrs := rh.Attrs(secrets.RecordAttrs(rec), secrets.Value{})
	for _, n := range attrNames(attrs) {
		rows = append(rows, attrRow{n, FormatValue(attrs[n])})
	}
	rows = append(rows, attrRow{"dir", FormatValue(rec.Dir)})
	if rec.Addr.Resource.Kind == addrs.Video {
		rows = append(rows, attrRow{"watermark_free", strconv.FormatBool(rec.WatermarkFree)})
	}
	deps := make([]any, len(rec.Deps))
	for i, d := range rec.Deps {
		deps[i] = d.String()
	}
	rows = append(rows,
		attrRow{"depends_on", FormatValue(deps)},
		attrRow{"protected", strconv.FormatBool(snap.Protections[addr])},
		attrRow{"fingerprint", FormatValue(rec.Fingerprint)},
		attrRow{"created_at", FormatValue(jsonstate.Time(rec.CreatedAt))},
		attrRow{"updated_at", FormatValue(jsonstate.Time(rec.UpdatedAt))},
	)
	writeRows(w, "    ", rows)
	for _, o := range rec.Outputs {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "    output {")
		orows := []attrRow{
			{"index", strconv.Itoa(o.Index)},
			{"path", FormatValue(o.Path)},
			{"sha256", FormatValue(o.SHA256)},
			{"size", strconv.FormatInt(o.Size, 10)},
			{"content_type", FormatValue(o.ContentType)},
			{"id", FormatValue(o.ID)},
			{"media_url", FormatValue(o.MediaURL)},
		}
		if o.ThumbnailURL != "" {
			orows = append(orows, attrRow{"thumbnail_url", FormatValue(o.ThumbnailURL)})
		}
		// As the summary: with a store configured, or once the file went
		// to one, whether the store holds it, as recorded at upload.
		if store || o.Stored {
			orows = append(orows, attrRow{"in_store", strconv.FormatBool(o.Stored)})
		}
		writeRows(w, "        ", orows)
		fmt.Fprintln(w, "    }")
	}
	if f := rec.Failure; f != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "    last_failure {")
		frows := []attrRow{
			{"generation_id", FormatValue(f.GenerationID)},
			{"error", FormatValue(rh.Text(f.Error))},
			{"at", FormatValue(jsonstate.Time(f.At))},
		}
		attrs := rh.Attrs(secrets.FailureAttrs(f), secrets.Value{})
		for _, n := range attrNames(attrs) {
			frows = append(frows, attrRow{n, FormatValue(attrs[n])})
		}
		writeRows(w, "        ", frows)
		fmt.Fprintln(w, "    }")
	}
	fmt.Fprintln(w, "}")
	if it := snap.Intents[addr]; it != nil {
		fmt.Fprintf(w, "# %s\n", IntentNote(it))
	}
}

// failureNote says in one line which generation failed after the one the
// record holds, for the summary of the whole state.
func failureNote(f *statefile.Failure, rh *secrets.Record) string {
	note := "job " + f.GenerationID + " failed"
	if p, ok := secrets.FailureAttrs(f)["prompt"].(string); ok {
		if rh.Hides("prompt") || rh.Text(p) != p {
			note += " (prompt " + secrets.Text + ")"
		} else {
			note += fmt.Sprintf(" (prompt %q)", p)
		}
	}
	return note + "; the files above are the generation before it"
}

type attrRow struct{ name, value string }

// writeRows writes name = value lines with the equals signs aligned, as
// hclwrite formats a block.
func writeRows(w io.Writer, indent string, rows []attrRow) {
	width := 0
	for _, r := range rows {
		width = max(width, len(r.name))
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%s%-*s = %s\n", indent, width, r.name, r.value)
	}
}

// attrNames lists m's attribute names in the order every view uses
// (config.SortAttrNames).
func attrNames(m map[string]any) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	config.SortAttrNames(names)
	return names
}
