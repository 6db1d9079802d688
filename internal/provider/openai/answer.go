package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/apiclient"
	"github.com/genform/genform/internal/provider"
)

// readAnswer reads an answer of POST /v1/images/generations: each image
// of data[] from its b64_json (the GPT image models') or its url (the
// DALL·E models', valid 60 minutes), output_format naming their type,
// usage, and created. Its detail is the answer without the base64
// payloads, so that the state stays small.
func readAnswer(b []byte) (*provider.Result, int64, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, 0, fmt.Errorf("decoding the answer: %w", err)
	}
	// A member missing, or of another type, is as good as absent.
	var created int64
	var format string
	json.Unmarshal(top["created"], &created)      //nolint:errcheck
	json.Unmarshal(top["output_format"], &format) //nolint:errcheck
	var items []map[string]json.RawMessage
	if raw, ok := top["data"]; !ok || json.Unmarshal(raw, &items) != nil || len(items) == 0 {
		return nil, 0, errors.New("the answer carries no data[] of images")
	}
	delete(top, "data") // its payloads are read from items, and freed one by one
	res := &provider.Result{Kind: addrs.Image}
	for i, it := range items {
		o := provider.Output{Index: i}
		switch {
		case len(it["b64_json"]) > 0 && string(it["b64_json"]) != "null":
			data, err := decodeBase64(it["b64_json"])
			if err != nil || len(data) == 0 {
				return nil, 0, fmt.Errorf("image %d: its b64_json is not base64 (%v)", i, err)
			}
			o.Data, o.MediaType = data, mediaType(data, format)
			delete(it, "b64_json")
		case len(it["url"]) > 0:
			if json.Unmarshal(it["url"], &o.URL) != nil || o.URL == "" {
				return nil, 0, fmt.Errorf("image %d: its url is not a string", i)
			}
		default:
			return nil, 0, fmt.Errorf("image %d carries neither b64_json nor url", i)
		}
		if i == 0 {
			var revised string
			if json.Unmarshal(it["revised_prompt"], &revised) == nil {
				res.Prompt = apiclient.Printable(revised)
			}
		}
		res.Outputs = append(res.Outputs, o)
	}
	if u := top["usage"]; len(u) > 0 && string(u) != "null" {
		res.Usage = u
	}
	stripped, err := json.Marshal(items)
	if err != nil {
		return nil, 0, fmt.Errorf("encoding the detail: %w", err)
	}
	top["data"] = stripped
	if res.Detail, err = json.Marshal(top); err != nil {
		return nil, 0, fmt.Errorf("encoding the detail: %w", err)
	}
	return res, created, nil
}

// decodeBase64 decodes a JSON string of base64: from its bytes as they
// are when it holds no escape (base64 needs none, so this is the rule),
// else through the JSON decoder.
func decodeBase64(raw json.RawMessage) ([]byte, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, errors.New("not a JSON string")
	}
	text := raw[1 : len(raw)-1]
	if bytes.IndexByte(text, '\\') >= 0 {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		text = []byte(s)
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(text)))
	n, err := base64.StdEncoding.Decode(out, text)
	return out[:n], err
}

// mediaType is the type of an image's bytes as they sniff, or, when they
// do not sniff as an image, the type output_format names.
func mediaType(data []byte, format string) string {
	if t := http.DetectContentType(data); strings.HasPrefix(t, "image/") {
		return t
	}
	switch format {
	case "png", "jpeg", "webp":
		return "image/" + format
	}
	return ""
}

// lostReason is why a job recorded by an earlier process has no images:
// that process ended between the answer and the files.
const lostReason = "OpenAI answered this job's images inline, once, to the genform process that sent the request, " +
	"which ended before it wrote them; OpenAI keeps no copy to fetch again, so they were paid for and are lost; " +
	"generate them anew (paid again) to have them"

// notHeld is why the images of a job this process does not hold cannot
// be fetched, whatever became of the files written from them.
const notHeld = "its images came inline in the answer to its request, once, and this process does not hold them; " +
	"OpenAI keeps no copy to fetch again: generate them anew (paid again) to have them"

// Status is what became of the job: held, what its answer was; recorded
// (a job of an earlier process), what its handle says. A job that made
// images which this process does not hold ended Failed, with the reason
// why they cannot be had; one refused for its content ended refused.
func (p *Provider) Status(ctx context.Context, j provider.Job) (provider.Status, error) {
	if h, ok := p.held.get(j.ID); ok {
		return h.status, nil
	}
	var hd Handle
	if len(j.Handle) == 0 || json.Unmarshal(j.Handle, &hd) != nil || (hd.Images == 0 && hd.Refusal == "") {
		return provider.Status{}, fmt.Errorf("openai: job %s is not one genform sent and recorded: OpenAI's Images API keeps no jobs, so there is nothing to look it up by", j.ID)
	}
	if hd.Refusal != "" {
		return provider.Status{Raw: apiclient.Printable(hd.Code), State: provider.Failed, Known: true, Reason: apiclient.Printable(hd.Refusal), Refused: true}, nil
	}
	return provider.Status{Raw: rawGenerated, State: provider.Failed, Known: true, Progress: 1, Reason: lostReason}, nil
}

// Result hands over the images the job's answer carried: its outputs hold
// their bytes (Data, MediaType) and no URL, or, for a DALL·E model, the
// URL it answered. A job this process does not hold has no result to
// fetch: OpenAI keeps none.
func (p *Provider) Result(ctx context.Context, j provider.Job) (*provider.Result, error) {
	h, ok := p.held.handOut(j.ID)
	switch {
	case !ok:
		return nil, fmt.Errorf("openai: job %s: %s", j.ID, notHeld)
	case h.status.Refused:
		return nil, fmt.Errorf("openai: job %s was refused for its content and made no images: %s", j.ID, h.status.Reason)
	case h.res == nil:
		return nil, fmt.Errorf("openai: job %s: its images were handed over and then released from memory; they are in the files written from them", j.ID)
	}
	return h.res, nil
}
