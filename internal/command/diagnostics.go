package command

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/hashicorp/hcl/v2"
)

// diagnosticsWidth is the width diagnostics wrap to when stderr is not a
// terminal (and the most they use on a wide one, to stay readable).
const diagnosticsWidth = 78

// writeDiagnostics prints every diagnostic of a run to env.Stderr, each with
// the source snippet it points at (files is usually config.Config.Files),
// in colour when env.Color is set. Every command that loads configuration
// uses it, so that all problems are shown together, the same way.
func writeDiagnostics(env *Env, files map[string]*hcl.File, diags hcl.Diagnostics) {
	if len(diags) == 0 {
		return
	}
	width := diagnosticsWidth
	// On a terminal narrower than that, wrap to its width (as the shell
	// reports it in COLUMNS) so lines do not wrap twice.
	if isTerminal(env.Stderr) && env.Getenv != nil {
		if w, err := strconv.Atoi(env.Getenv("COLUMNS")); err == nil && w > 20 && w < width {
			width = w
		}
	}
	w := hcl.NewDiagnosticTextWriter(env.Stderr, files, uint(width), env.Color)
	// The writer only fails when env.Stderr does, and then there is nowhere
	// left to report it.
	_ = w.WriteDiagnostics(diags)
}

// jsonDiagnostics is the document `validate -json` prints. Its shape follows
// Terraform's, so tools that read one read the other.
type jsonDiagnostics struct {
	FormatVersion string           `json:"format_version"`
	Valid         bool             `json:"valid"`
	ErrorCount    int              `json:"error_count"`
	WarningCount  int              `json:"warning_count"`
	Diagnostics   []jsonDiagnostic `json:"diagnostics"`
}

type jsonDiagnostic struct {
	Severity string       `json:"severity"`
	Summary  string       `json:"summary"`
	Detail   string       `json:"detail,omitempty"`
	Range    *jsonRange   `json:"range,omitempty"`
	Snippet  *jsonSnippet `json:"snippet,omitempty"`
}

type jsonRange struct {
	Filename string  `json:"filename"`
	Start    jsonPos `json:"start"`
	End      jsonPos `json:"end"`
}

type jsonPos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

// jsonSnippet is the source the range points into: the whole lines it
// covers, and where in them the range starts and ends.
type jsonSnippet struct {
	Context              *string `json:"context"`
	Code                 string  `json:"code"`
	StartLine            int     `json:"start_line"`
	HighlightStartOffset int     `json:"highlight_start_offset"`
	HighlightEndOffset   int     `json:"highlight_end_offset"`
}

// diagnosticsDocument renders diags as the `-json` document.
func diagnosticsDocument(files map[string]*hcl.File, diags hcl.Diagnostics) jsonDiagnostics {
	doc := jsonDiagnostics{FormatVersion: "1", Diagnostics: []jsonDiagnostic{}}
	for _, d := range diags {
		jd := jsonDiagnostic{Severity: "error", Summary: d.Summary, Detail: d.Detail}
		if d.Severity == hcl.DiagWarning {
			jd.Severity = "warning"
			doc.WarningCount++
		} else {
			doc.ErrorCount++
		}
		if d.Subject != nil {
			r := *d.Subject
			jd.Range = &jsonRange{
				Filename: r.Filename,
				Start:    jsonPos{Line: r.Start.Line, Column: r.Start.Column, Byte: r.Start.Byte},
				End:      jsonPos{Line: r.End.Line, Column: r.End.Column, Byte: r.End.Byte},
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
func snippet(f *hcl.File, r hcl.Range) *jsonSnippet {
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
	s := &jsonSnippet{
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

// writeDiagnosticsJSON prints the `-json` document to env.Stdout.
func writeDiagnosticsJSON(env *Env, files map[string]*hcl.File, diags hcl.Diagnostics) error {
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(diagnosticsDocument(files, diags))
}
