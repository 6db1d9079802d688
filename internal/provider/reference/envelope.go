package reference

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/genform/genform/internal/apiclient"
)

// decodeEnvelope returns the value of a success answer
// {"status": "...", "value": {...}}. An envelope that carries an error in
// place of a value yields an *Error (its Op and HTTPStatus left for the
// caller to fill); anything else malformed is a plain error.
func decodeEnvelope(body []byte) (json.RawMessage, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, errors.New("the answer is empty")
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("the answer is not a JSON object: %w", err)
	}
	if env == nil {
		return nil, errors.New("the answer is null, not a JSON object")
	}
	value, ok := env["value"]
	if !ok || isNull(value) {
		if e, isErr := apiclient.BodyError(body); isErr {
			return nil, e
		}
		return nil, errors.New(`the answer has no "value"`)
	}
	if value[0] != '{' {
		return nil, fmt.Errorf(`"value" is %s, not an object`, jsonKind(value))
	}
	return value, nil
}

// jsonKind names the type of a JSON value for error messages.
func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	default:
		return "a number"
	}
}

// decodeValue decodes an envelope's value into v, naming the member whose
// type is wrong.
func decodeValue(value json.RawMessage, v any) error {
	if err := json.Unmarshal(value, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if field == "" {
				field = "value"
			}
			return fmt.Errorf("%q is %s, want %s", field, te.Value, te.Type)
		}
		return err
	}
	return nil
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}
