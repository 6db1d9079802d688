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

	"github.com/genform/genform/internal/addrs"
)

// SimulatorService is the service identity of the built-in simulator, in
// fingerprints, plans and the state: its port changes from run to run, so
// its URL cannot be.
const SimulatorService = "simulator"

// Fingerprint is the hash of the exact request an instance would send: hex
// sha256 over the service's identity (its base URL, or SimulatorService),
// the endpoint and the canonical JSON body. The token is never an input, so
// rotating it regenerates nothing.
//
// A plan fingerprints every instance, so the hashed bytes are put together
// in a buffer on the stack (a request of up to a few hundred bytes fits),
// and the hash and its hex digits stay there too: the result is the one
// allocation (TestFingerprintAllocations).
func Fingerprint(service string, endpoint addrs.Endpoint, request []byte) string {
	path := endpoint.Path()
	var stack [512]byte
	b := append(stack[:0], "genform-fingerprint-v1\x00"...)
	b = strconv.AppendInt(b, int64(len(service)), 10)
	b = append(append(append(b, ':'), service...), 0)
	b = strconv.AppendInt(b, int64(len(path)), 10)
	b = append(append(append(b, ':'), path...), 0)
	sum := sha256.Sum256(append(b, request...))
	var digits [2 * sha256.Size]byte
	hex.Encode(digits[:], sum[:])
	return string(digits[:])
}

// JSON encodes a wholly known value as canonical JSON: object keys sorted,
// no insignificant whitespace, numbers in their shortest exact decimal
// form, so that equal values always have equal bytes. It is the one
// conversion of cty values to JSON in genform: requests, fingerprints,
// plans and output values all go through it.
func JSON(v cty.Value) ([]byte, error) {
	return appendJSON(make([]byte, 0, 256), v, false)
}

// JSONValue is v as plain Go values shaped like JSON (string, bool,
// json.Number, []any, map[string]any, nil), the way encoding/json decodes
// JSON with UseNumber: what plans show and compare, and output -json
// prints. What is null or not known yet is nil.
func JSONValue(v cty.Value) any {
	// Most attributes are strings, numbers and bools: those skip the trip
	// through bytes and a decoder, which cost a fifth of planning 5,000
	// new resources (TestJSONValue checks both ways agree).
	if v.IsKnown() && !v.IsNull() {
		switch v.Type() {
		case cty.String:
			return v.AsString()
		case cty.Bool:
			return v.True()
		case cty.Number:
			if b, err := appendJSONNumber(nil, v.AsBigFloat()); err == nil {
				return json.Number(b)
			}
		}
	}
	b, err := appendJSON(make([]byte, 0, 64), v, true)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil {
		return nil
	}
	return out
}

// appendJSON appends v's canonical JSON to b. A value not known yet is an
// error, or null with unknownAsNull.
func appendJSON(b []byte, v cty.Value, unknownAsNull bool) ([]byte, error) {
	if !v.IsKnown() {
		if unknownAsNull {
			return append(b, "null"...), nil
		}
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
			if b, err = appendJSON(b, e, unknownAsNull); err != nil {
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
			if b, err = appendJSON(b, e, unknownAsNull); err != nil {
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
func FlattenRequest(endpoint addrs.Endpoint, request []byte) (map[string]any, error) {
	if endpoint.Kind() == 0 {
		return nil, fmt.Errorf("flattening request: unknown endpoint %v", endpoint)
	}
	dec := json.NewDecoder(bytes.NewReader(request))
	dec.UseNumber()
	var body map[string]any
	if err := dec.Decode(&body); err != nil {
		return nil, fmt.Errorf("flattening request for %s: %w", endpoint, err)
	}
	out := make(map[string]any, len(body)+4)
	if endpoint.Provider() != addrs.Reference {
		// A model's input is shown as it was sent, under the provider's
		// own names, beside the model.
		for k, v := range body {
			out[k] = v
		}
		out["model"] = endpoint.Target()
		return out, nil
	}
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
