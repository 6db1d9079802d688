package reference

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDecodeEnvelope checks that a success answer either yields its value
// object or a clear error, never a panic or a non-object value.
func FuzzDecodeEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"status":"success","value":{"generation_id":"g1"}}`,
		`{"status":"success","value":{"status":"succeed","progress":1}}`,
		`{"status":"ok","value":[]}`,
		`{"status":"error","error":{"message":"m","code":"VB-100020"}}`,
		`{"value":null}`, `{}`, `[]`, `"x"`, `{"value":{}`, ` {"value" : { } } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		value, err := decodeEnvelope(body)
		if err != nil {
			if err.Error() == "" {
				t.Error("empty error message")
			}
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(value, &obj) != nil || obj == nil {
			t.Errorf("value %q is not a JSON object", value)
		}
		var env map[string]json.RawMessage
		if json.Unmarshal(body, &env) != nil || !bytes.Equal(env["value"], value) {
			t.Errorf("value %q is not the envelope's value %q", value, env["value"])
		}
		// The typed decoders must not panic on any object either.
		var cr Creation
		_ = decodeValue(value, &cr)
	})
}
