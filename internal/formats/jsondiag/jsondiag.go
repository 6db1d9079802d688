package jsondiag

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/hashicorp/hcl/v2"
)

// Document is what `validate -json` prints. Its shape follows
// Terraform's, so tools that read one read the other.
type Document struct {
	FormatVersion string       `json:"format_version"`
	Valid         bool         `json:"valid"`
	ErrorCount    int          `json:"error_count"`
	WarningCount  int          `json:"warning_count"`
	Diagnostics   []diagnostic `json:"diagnostics"`
}

type diagnostic struct {
	Severity string       `json:"severity"`
	Summary  string       `json:"summary"`
	Detail   string       `json:"detail,omitempty"`
	Range    *rangeJSON   `json:"range,omitempty"`
	Snippet  *snippetJSON `json:"snippet,omitempty"`
}

type rangeJSON struct {
	Filename string  `json:"filename"`
	Start    posJSON `json:"start"`
	End      posJSON `json:"end"`
}

type posJSON struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

// snippetJSON is the source the range points into: the whole lines it
// covers, and where in them the range starts and ends.
type snippetJSON struct {
	Context              *string `json:"context"`
	Code                 string  `json:"code"`
	StartLine            int     `json:"start_line"`
	HighlightStartOffset int     `json:"highlight_start_offset"`
	HighlightEndOffset   int     `json:"highlight_end_offset"`
}

// diagnosticsDocument renders diags as the `-json` Document.
func diagnosticsDocument(files map[string]*hcl.File, diags hcl.Diagnostics) Document {
	doc := Document{FormatVersion: "1", Diagnostics: []diagnostic{}}
	for _, d := range diags {
		jd := diagnostic{Severity: "error", Summary: d.Summary, Detail: d.Detail}
		if d.Severity == hcl.DiagWarning {
			jd.Severity = "warning"
			doc.WarningCount++
		} else {
			doc.ErrorCount++
		}
		if d.Subject != nil {
			r := *d.Subject
			jd.Range = &rangeJSON{
				Filename: r.Filename,
				Start:    posJSON{Line: r.Start.Line, Column: r.Start.Column, Byte: r.Start.Byte},
				End:      posJSON{Line: r.End.Line, Column: r.End.Column, Byte: r.End.Byte},
			}
			jd.Snippet = snippet(files[r.Filename], r)
		}
		doc.Diagnostics = append(doc.Diagnostics, jd)
	}
	doc.Valid = doc.ErrorCount == 0
	return doc
}

// snippet cuts the lines r covers out of f, or returns nil when the source
// is not at hand (a value from the command line, say).
func snippet(f *hcl.File, r hcl.Range) *snippetJSON {
	if f == nil || f.Bytes == nil {
		return nil
	}
	src := f.Bytes
	start, end := r.Start.Byte, r.End.Byte
	if start < 0 || end < start || end > len(src) {
		return nil
	}
	lineStart := bytes.LastIndexByte(src[:start], '\n') + 1
	lineEnd := len(src)
	if i := bytes.IndexByte(src[end:], '\n'); i >= 0 {
		lineEnd = end + i
	}
	if end > start && src[end-1] == '\n' {
		// A range ending with its line's newline needs no following line.
		lineEnd = end - 1
	}
	s := &snippetJSON{
		Code:                 string(bytes.TrimRight(src[lineStart:lineEnd], "\r")),
		StartLine:            r.Start.Line,
		HighlightStartOffset: start - lineStart,
		HighlightEndOffset:   end - lineStart,
	}
	if s.HighlightEndOffset > len(s.Code) {
		s.HighlightEndOffset = len(s.Code)
	}
	type contextStringer interface{ ContextString(offset int) string }
	if cs, ok := f.Nav.(contextStringer); ok {
		if c := cs.ContextString(start); c != "" {
			s.Context = &c
		}
	}
	return s
}

// Write prints the Document of diags (validate -json) to w; files are
// the configuration's, for the snippets.
func Write(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(diagnosticsDocument(files, diags))
}
