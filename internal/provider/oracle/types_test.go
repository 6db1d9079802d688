package oracle_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/genform/genform/internal/provider"
)

// checked is one request genform sent, as the TypeScript check holds it
// against the official client's type of its endpoint's parameters.
type checked struct {
	sent
	// Type is the client's type the literal is assigned to.
	Type string
	// Literal is the object the client's caller would pass for the
	// request: its body, with what the client moves into the path (a
	// Replicate model's name) put back.
	Literal map[string]any
}

// typing is how one provider's requests are checked: the imports of the
// client's types, and for a request the type of its endpoint's
// parameters and the literal to assign to it, or why there is none.
type typing struct {
	imports string
	typeOf  func(s sent) (typ string, literal map[string]any, err error)
}

// typings are the official clients' types of the endpoints genform
// sends to, by provider.
var typings = map[string]typing{
	// fal's input is per model: the client's EndpointTypeMap
	// (src/types/endpoints.d.ts) types the input of every model it knows.
	"fal": {
		imports: `import type { EndpointTypeMap } from "@fal-ai/client/endpoints";`,
		typeOf: func(s sent) (string, map[string]any, error) {
			model := strings.TrimPrefix(s.Path, "/")
			if !falEndpoints()[model] {
				return "", nil, fmt.Errorf("fal model %s is not in the client's EndpointTypeMap: its input is not typed there", model)
			}
			body, err := object(s.Body)
			return fmt.Sprintf("EndpointTypeMap[%q][\"input\"]", model), body, err
		},
	},
	// Replicate's predictions.create takes {model | version, input, ...}
	// and sends an official model's name in the path; its input is
	// typed object, whatever the model.
	"replicate": {
		imports: `import type Replicate from "replicate";
type PredictionCreateParams = Parameters<Replicate["predictions"]["create"]>[0];`,
		typeOf: func(s sent) (string, map[string]any, error) {
			body, err := object(s.Body)
			if err != nil {
				return "", nil, err
			}
			if m := regexp.MustCompile(`^/v1/models/([^/]+)/([^/]+)/predictions$`).FindStringSubmatch(s.Path); m != nil {
				body["model"] = m[1] + "/" + m[2]
			} else if s.Path != "/v1/predictions" {
				return "", nil, fmt.Errorf("POST %s is no endpoint of predictions.create", s.Path)
			}
			return "PredictionCreateParams", body, nil
		},
	},
	// genform never streams: images.generate's non-streaming parameters.
	"openai": {
		imports: `import type OpenAI from "openai";`,
		typeOf: func(s sent) (string, map[string]any, error) {
			if s.Path != "/v1/images/generations" {
				return "", nil, fmt.Errorf("POST %s (%s) is not checked here", s.Path, s.ContentType)
			}
			body, err := object(s.Body)
			return "OpenAI.Images.ImageGenerateParamsNonStreaming", body, err
		},
	},
	"runway": {
		imports: `import type RunwayML from "@runwayml/sdk";`,
		typeOf: func(s sent) (string, map[string]any, error) {
			typ, ok := map[string]string{
				"/v1/text_to_image":  "RunwayML.TextToImageCreateParams",
				"/v1/image_to_video": "RunwayML.ImageToVideoCreateParams",
				"/v1/text_to_video":  "RunwayML.TextToVideoCreateParams",
				"/v1/video_to_video": "RunwayML.VideoToVideoCreateParams",
			}[s.Path]
			if !ok {
				return "", nil, fmt.Errorf("POST %s is no create endpoint the oracle knows", s.Path)
			}
			body, err := object(s.Body)
			return typ, body, err
		},
	},
	"luma": {
		imports: `import type LumaAI from "lumaai";`,
		typeOf: func(s sent) (string, map[string]any, error) {
			typ, ok := map[string]string{
				"/generations/image": "LumaAI.Generations.ImageCreateParams",
				"/generations/video": "LumaAI.GenerationCreateParams",
			}[s.Path]
			if !ok {
				return "", nil, fmt.Errorf("POST %s is no create endpoint the oracle knows", s.Path)
			}
			body, err := object(s.Body)
			return typ, body, err
		},
	},
}

// canaryField is a field no client's parameters have.
const canaryField = "genform_oracle_canary"

// knownFindings are what the check found in genform's tables that is
// not this package's to fix: each is logged instead of failing the test,
// with why, and an entry that no longer matches anything fails it, so
// that the list is only ever what is still true.
var knownFindings = []struct {
	provider, what, diag, why string
}{}

// known returns the entry of knownFindings that explains diagnostic diag
// of the request what to provider, or -1.
func known(provider, what, diag string) int {
	for i, k := range knownFindings {
		if k.provider == provider && strings.HasPrefix(what, k.what) && strings.Contains(diag, k.diag) {
			return i
		}
	}
	return -1
}

// object decodes a JSON object, its numbers as they were written.
func object(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("the body is not a JSON object: %.200s", b)
	}
	return m, nil
}

// falEndpoints are the model ids the fal client's EndpointTypeMap types.
var falEndpoints = sync.OnceValue(func() map[string]bool {
	b, err := os.ReadFile(filepath.Join(clientsDir, "node_modules", "@fal-ai", "client", "src", "types", "endpoints.d.ts"))
	if err != nil {
		return nil
	}
	_, rest, _ := bytes.Cut(b, []byte("export type EndpointTypeMap = {"))
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^    "([^"]+)": \{$`).FindAllSubmatch(rest, -1) {
		ids[string(m[1])] = true
	}
	return ids
})

// requestFile is the TypeScript check of the requests genform sent one
// provider: each body assigned, as an object literal, to a variable of
// the client's type of its endpoint's parameters, so that tsc --strict
// refuses a field the type does not allow (an excess property) and a
// value outside a field's type.
type requestFile struct {
	name   string
	checks []checked
	lines  []int // the line of each check's declaration
	// canary is the line of a literal with a field no client type has,
	// which tsc must refuse: a type that resolved to any, or a file tsc
	// did not read, would otherwise pass everything.
	canary int
	src    string
}

// requestFileOf sends what genform builds for r through its adapter to
// its simulator (sentByGenform) and writes the check of what arrived;
// nil, the test failed, when there is nothing to check.
func requestFileOf(t *testing.T, r *provider.Registration) *requestFile {
	ty, ok := typings[r.Name()]
	if !ok {
		t.Errorf("provider %s: its requests are held to no client's types: add it to typings", r.Name())
		return nil
	}
	got, notes := sentByGenform(t, r)
	f := &requestFile{name: r.Name() + "_requests.ts"}
	var src strings.Builder
	src.WriteString("// The requests genform sent to its " + r.Name() + " simulator, as " + clients[r.Name()] + " types them.\n")
	src.WriteString(ty.imports + "\n\n")
	line := strings.Count(src.String(), "\n") + 1
	for i, s := range got {
		typ, lit, err := ty.typeOf(s)
		if err != nil {
			notes = append(notes, s.What+": "+err.Error())
			continue
		}
		b, err := json.MarshalIndent(lit, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		decl := fmt.Sprintf("// %s: %s %s\nexport const request%d: %s = %s;\n\n", s.What, s.Method, s.Path, i, typ, b)
		f.checks = append(f.checks, checked{sent: s, Type: typ, Literal: lit})
		f.lines = append(f.lines, line)
		line += strings.Count(decl, "\n")
		src.WriteString(decl)
	}
	for _, n := range notes {
		t.Logf("%s: %s", r.Name(), n)
	}
	if len(f.checks) == 0 {
		t.Errorf("provider %s: no request genform sent could be held to the client's types", r.Name())
		return nil
	}
	first := f.checks[0]
	canary := map[string]any{canaryField: true}
	for k, v := range first.Literal {
		canary[k] = v
	}
	b, err := json.MarshalIndent(canary, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	f.canary = line
	fmt.Fprintf(&src, "// The canary: %s with a field no type has.\nexport const canary: %s = %s;\n", first.What, first.Type, b)
	f.src = src.String()
	return f
}

// reportRequests fails a subtest requests/<provider> for each request
// tsc refused, but for the known findings, which it logs; and fails the
// test for a known finding no longer found.
func reportRequests(t *testing.T, files []*requestFile, diags []tsDiag, out string) {
	seen := make([]bool, len(knownFindings))
	for _, f := range files {
		name := strings.TrimSuffix(f.name, "_requests.ts")
		t.Run("requests/"+name, func(t *testing.T) {
			canaryCaught := false
			for _, d := range diags {
				if d.file != f.name {
					continue
				}
				if d.line >= f.canary {
					canaryCaught = canaryCaught || strings.Contains(d.text, canaryField)
					continue
				}
				i := len(f.lines) - 1
				for i > 0 && f.lines[i] > d.line {
					i--
				}
				c := f.checks[i]
				if k := known(name, c.What, d.text); k >= 0 {
					seen[k] = true
					t.Logf("known: %s: %s (%s)", c.What, d.text, knownFindings[k].why)
					continue
				}
				t.Errorf("%s sent a request %s's types do not allow (%s):\n%s %s %s\n%s", c.What, clients[name], c.Type, c.Method, c.Path, c.Body, d.text)
			}
			if !canaryCaught {
				t.Errorf("tsc let a request with the field %s through %s's types: the check checks nothing\n%s", canaryField, clients[name], out)
			}
			t.Logf("%d requests genform sent held to %s's types", len(f.checks), clients[name])
		})
	}
	for i, k := range knownFindings {
		if !seen[i] {
			t.Errorf("the known finding %q of %s (%s) is no longer found: remove it from knownFindings", k.diag, k.provider, k.why)
		}
	}
}
