package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"
)

// The service endpoints a resource instance's request goes to.
const (
	EndpointText2Image  = "/v1/jobs/text2image"
	EndpointImage2Video = "/v1/jobs/gen2/image2video"
	EndpointKeyFrames   = "/v1/jobs/gen2/afc"
	EndpointText2Video  = "/v1/jobs/gen2/text2video"
)

// SimulatorService is the service identity of the built-in simulator in a
// fingerprint: its port changes from run to run, so its URL cannot be.
const SimulatorService = "simulator"

// Fingerprint is the hash of the exact request an instance would send: hex
// sha256 over the service's identity (its base URL, or SimulatorService),
// the endpoint and the canonical JSON body. The token is never an input, so
// rotating it regenerates nothing.
func Fingerprint(service, endpoint string, request []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "genform-fingerprint-v1\x00%d:%s\x00%d:%s\x00", len(service), service, len(endpoint), endpoint)
	h.Write(request)
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalJSON encodes a wholly known value as JSON with object keys
// sorted, no insignificant whitespace, and numbers in their shortest exact
// decimal form, so that equal requests always have equal bytes.
func canonicalJSON(v cty.Value) ([]byte, error) {
	return appendJSON(make([]byte, 0, 256), v)
}

func appendJSON(b []byte, v cty.Value) ([]byte, error) {
	if !v.IsKnown() {
		return nil, fmt.Errorf("value is not known")
	}
	if v.IsNull() {
		return append(b, "null"...), nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return appendJSONString(b, v.AsString()), nil
	case ty == cty.Number:
		return appendJSONNumber(b, v.AsBigFloat())
	case ty == cty.Bool:
		if v.True() {
			return append(b, "true"...), nil
		}
		return append(b, "false"...), nil
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		b = append(b, '[')
		first := true
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if !first {
				b = append(b, ',')
			}
			first = false
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case ty.IsObjectType() || ty.IsMapType():
		// cty iterates object attributes and map keys in sorted order.
		b = append(b, '{')
		first := true
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendJSONString(b, k.AsString())
			b = append(b, ':')
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("cannot encode a value of type %s as JSON", ty.FriendlyName())
}

func appendJSONNumber(b []byte, f *big.Float) ([]byte, error) {
	if f.IsInf() {
		return nil, fmt.Errorf("cannot encode infinity as JSON")
	}
	if f.IsInt() {
		if i, acc := f.Int64(); acc == big.Exact {
			return strconv.AppendInt(b, i, 10), nil
		}
	}
	return append(b, f.Text('f', -1)...), nil
}

const hexDigits = "0123456789abcdef"

func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// FlattenRequest turns a stored request body back into the user-facing
// attributes, the same names Instance.Attrs uses: every leaf of config and
// settings becomes a top-level name. It shows old values in a plan's diff.
// Numbers come back as json.Number, lists as []any.
func FlattenRequest(endpoint string, request []byte) (map[string]any, error) {
	switch endpoint {
	case EndpointText2Image, EndpointImage2Video, EndpointKeyFrames, EndpointText2Video:
	default:
		return nil, fmt.Errorf("flattening request: unknown endpoint %q", endpoint)
	}
	dec := json.NewDecoder(bytes.NewReader(request))
	dec.UseNumber()
	var body map[string]any
	if err := dec.Decode(&body); err != nil {
		return nil, fmt.Errorf("flattening request for %s: %w", endpoint, err)
	}
	out := make(map[string]any, len(body)+4)
	for k, v := range body {
		if k == "config" || k == "settings" {
			if m, ok := v.(map[string]any); ok {
				for k2, v2 := range m {
					out[k2] = v2
				}
				continue
			}
		}
		out[k] = v
	}
	return out, nil
}
