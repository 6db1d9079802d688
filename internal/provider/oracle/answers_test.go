package oracle_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// answer is one answer a simulator gave a client: a 2xx JSON body.
type answer struct {
	Method, Path string
	Status       int
	Body         []byte
}

// answerRecorder keeps the JSON answers of 2xx the handler behind it
// gives to the API's requests, in order: not the simulator's own report
// (GET /_sim/jobs), which no client reads.
type answerRecorder struct {
	mu  sync.Mutex
	got []answer
}

func (rec *answerRecorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tee := &teeWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(tee, r)
		if tee.status/100 == 2 && !strings.HasPrefix(r.URL.Path, "/_sim/") && strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") && tee.body.Len() > 0 {
			rec.mu.Lock()
			rec.got = append(rec.got, answer{Method: r.Method, Path: r.URL.Path, Status: tee.status, Body: tee.body.Bytes()})
			rec.mu.Unlock()
		}
	})
}

// teeWriter keeps a copy of what is written through it.
type teeWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
	body   bytes.Buffer
}

func (w *teeWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.wrote = true
	if strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		w.body.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// answerTyping is how one provider's answers are held to its client's
// types: the imports, and the client's type of an answer (what the
// client returns for it), "" for one it does not type.
type answerTyping struct {
	imports string
	typeOf  func(a answer, models map[string]string) (string, error)
}

// answerTypings are the clients' types of the answers genform's
// simulators give, by provider.
var answerTypings = map[string]answerTyping{
	"fal": {
		imports: `import type { InQueueQueueStatus, QueueStatus } from "@fal-ai/client";
import type { EndpointTypeMap } from "@fal-ai/client/endpoints";`,
		typeOf: func(a answer, models map[string]string) (string, error) {
			m := regexp.MustCompile(`^/[^/]+/[^/]+/requests/([^/]+)(/status|/cancel)?$`).FindStringSubmatch(a.Path)
			switch {
			case m == nil && a.Method == http.MethodPost:
				return "InQueueQueueStatus", nil
			case m == nil:
				return "", fmt.Errorf("%s %s: no answer the oracle knows", a.Method, a.Path)
			case m[2] == "/status":
				return "QueueStatus", nil
			case m[2] == "/cancel":
				return "", nil // the client returns nothing of it
			}
			model, ok := models[m[1]]
			if !ok {
				return "", fmt.Errorf("the result of request %s, whose submit was not seen", m[1])
			}
			if !falEndpoints()[model] {
				return "", fmt.Errorf("fal model %s is not in the client's EndpointTypeMap: its output is not typed there", model)
			}
			return fmt.Sprintf("EndpointTypeMap[%q][\"output\"]", model), nil
		},
	},
	"replicate": {
		imports: `import type { Account, Page, Prediction } from "replicate";`,
		typeOf: func(a answer, _ map[string]string) (string, error) {
			switch {
			case a.Path == "/v1/account":
				return "Account", nil
			case a.Path == "/v1/predictions" && a.Method == http.MethodGet:
				return "Page<Prediction>", nil
			case strings.HasPrefix(a.Path, "/v1/"):
				return "Prediction", nil
			}
			return "", fmt.Errorf("%s %s: no answer the oracle knows", a.Method, a.Path)
		},
	},
	"openai": {
		// models.list is a page: the answer is {object: "list", data}.
		imports: `import type OpenAI from "openai";`,
		typeOf: func(a answer, _ map[string]string) (string, error) {
			switch {
			case a.Path == "/v1/images/generations" || a.Path == "/v1/images/edits":
				return "OpenAI.Images.ImagesResponse", nil
			case a.Path == "/v1/models":
				return `{ object: "list"; data: Array<OpenAI.Models.Model> }`, nil
			case strings.HasPrefix(a.Path, "/v1/models/"):
				return "OpenAI.Models.Model", nil
			}
			return "", fmt.Errorf("%s %s: no answer the oracle knows", a.Method, a.Path)
		},
	},
	"runway": {
		imports: `import type RunwayML from "@runwayml/sdk";`,
		typeOf: func(a answer, _ map[string]string) (string, error) {
			switch {
			case a.Path == "/v1/text_to_image":
				return "RunwayML.TextToImageCreateResponse", nil
			case a.Path == "/v1/image_to_video":
				return "RunwayML.ImageToVideoCreateResponse", nil
			case a.Path == "/v1/text_to_video":
				return "RunwayML.TextToVideoCreateResponse", nil
			case a.Path == "/v1/video_to_video":
				return "RunwayML.VideoToVideoCreateResponse", nil
			case strings.HasPrefix(a.Path, "/v1/tasks/"):
				return "RunwayML.TaskRetrieveResponse", nil
			case a.Path == "/v1/organization":
				return "RunwayML.OrganizationRetrieveResponse", nil
			}
			return "", fmt.Errorf("%s %s: no answer the oracle knows", a.Method, a.Path)
		},
	},
	"luma": {
		imports: `import type LumaAI from "lumaai";`,
		typeOf: func(a answer, _ map[string]string) (string, error) {
			switch {
			case a.Path == "/generations" && a.Method == http.MethodGet:
				return "LumaAI.GenerationListResponse", nil
			case strings.HasPrefix(a.Path, "/generations"):
				return "LumaAI.Generation", nil
			case a.Path == "/credits":
				return "LumaAI.CreditGetResponse", nil
			case a.Path == "/ping":
				return "LumaAI.PingCheckResponse", nil
			}
			return "", fmt.Errorf("%s %s: no answer the oracle knows", a.Method, a.Path)
		},
	},
}

// falModels maps each request id a fal submit answer named to the model
// it was submitted to (the result's path names only the app).
func falModels(answers []answer) map[string]string {
	models := map[string]string{}
	for _, a := range answers {
		if a.Method != http.MethodPost {
			continue
		}
		var sub struct {
			RequestID string `json:"request_id"`
		}
		if json.Unmarshal(a.Body, &sub) == nil && sub.RequestID != "" {
			models[sub.RequestID] = strings.TrimPrefix(a.Path, "/")
		}
	}
	return models
}

// answerLiteral is an answer as a TypeScript literal to check: its JSON
// with every null left out (the providers send null for a field their
// clients type as optional, T | undefined; a null in a required field is
// still a field missing) and long strings cut (a base64 image is a
// string however long).
func answerLiteral(b []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	out, err := json.MarshalIndent(trimmed(v), "", "  ")
	return string(out), err
}

func trimmed(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := map[string]any{}
		for k, e := range x {
			if e != nil {
				m[k] = trimmed(e)
			}
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = trimmed(e)
		}
		return l
	case string:
		if len(x) > 200 {
			return x[:200]
		}
	}
	return v
}

// shape is what tells two answers apart for the check: their JSON with
// numbers, and strings that hold a digit or are long (ids, URLs, times),
// made alike; the polls of one job read the same while it runs.
func shape(typ string, b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return typ + string(b)
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			if len(x) > 1 {
				x = x[:1]
			}
			for i, e := range x {
				x[i] = walk(e)
			}
			return x
		case float64:
			return 0
		case string:
			if len(x) > 40 || strings.IndexFunc(x, unicode.IsDigit) >= 0 {
				return "s"
			}
		}
		return v
	}
	out, _ := json.Marshal(walk(v))
	return typ + string(out)
}

// answerFile is the TypeScript check of the answers one provider's
// simulator gave its client: each kind of answer once, as a literal the
// client's type of it must accept (fields the type does not name are
// allowed: an API answers more than a client reads).
type answerFile struct {
	name   string
	lines  []int
	what   []answer
	types  []string
	canary int
	src    string
}

// answerFileOf writes the check of the answers rec kept of provider
// name's simulator; nil, the test failed, when there is nothing to check.
func answerFileOf(t *testing.T, name string, rec *answerRecorder) *answerFile {
	ty, ok := answerTypings[name]
	if !ok {
		t.Errorf("provider %s: its simulator's answers are held to no client's types: add it to answerTypings", name)
		return nil
	}
	answers := rec.got
	models := map[string]string{}
	if name == "fal" {
		models = falModels(answers)
	}
	f := &answerFile{name: name + "_answers.ts"}
	var src strings.Builder
	src.WriteString("// The answers genform's " + name + " simulator gave " + clients[name] + ", as it types them.\n")
	src.WriteString(ty.imports + "\n")
	src.WriteString("type Mutable<T> = { -readonly [K in keyof T]: Mutable<T[K]> };\n\n")
	line := strings.Count(src.String(), "\n") + 1
	seen := map[string]bool{}
	for i, a := range answers {
		typ, err := ty.typeOf(a, models)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if typ == "" || seen[shape(typ, a.Body)] {
			continue
		}
		seen[shape(typ, a.Body)] = true
		lit, err := answerLiteral(a.Body)
		if err != nil {
			t.Errorf("%s: %s %s answered %d with a body that is not JSON: %v", name, a.Method, a.Path, a.Status, err)
			continue
		}
		decl := fmt.Sprintf("// %s %s: %d\nconst answer%d = %s as const;\nexport const check%d: %s = answer%d as Mutable<typeof answer%d>;\n\n",
			a.Method, a.Path, a.Status, i, lit, i, typ, i, i)
		src.WriteString(decl)
		f.what = append(f.what, a)
		f.types = append(f.types, typ)
		f.lines = append(f.lines, line)
		line += strings.Count(decl, "\n")
	}
	if len(f.what) == 0 {
		t.Errorf("provider %s: its simulator gave its client no answer to check", name)
		return nil
	}
	// The canary: an answer that is none of them, which tsc must refuse
	// (a missing field, or nothing in common with a type of optional
	// fields), lest a type that resolved to any pass all.
	f.canary = line
	fmt.Fprintf(&src, "const canary = { %q: true } as const;\nexport const canaryCheck: %s = canary as Mutable<typeof canary>;\n", canaryField, f.types[0])
	f.src = src.String()
	return f
}

// reportAnswers fails a subtest answers/<provider> for each answer tsc
// refused.
func reportAnswers(t *testing.T, files []*answerFile, diags []tsDiag) {
	for _, f := range files {
		name := strings.TrimSuffix(f.name, "_answers.ts")
		t.Run("answers/"+name, func(t *testing.T) {
			canaryCaught := false
			for _, d := range diags {
				if d.file != f.name {
					continue
				}
				if d.line >= f.canary {
					canaryCaught = true
					continue
				}
				i := len(f.lines) - 1
				for i > 0 && f.lines[i] > d.line {
					i--
				}
				a := f.what[i]
				t.Errorf("the %s simulator's answer to %s %s (%d) is not what %s types it as (%s):\n%s\n%s",
					name, a.Method, a.Path, a.Status, clients[name], f.types[i], d.text, cut(a.Body))
			}
			if !canaryCaught {
				t.Errorf("tsc let an answer with nothing of %s through %s's types: the check checks nothing", f.types[0], clients[name])
			}
			t.Logf("%d kinds of answer held to %s's types", len(f.what), clients[name])
		})
	}
}

func cut(b []byte) string {
	if len(b) > 800 {
		return string(b[:800]) + "..."
	}
	return string(b)
}
