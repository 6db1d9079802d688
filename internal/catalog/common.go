package catalog

import (
	"fmt"
	"maps"
)

// passInput copies input into a new body, which the common attributes
// are then added to: input passes through unchanged, and a common
// attribute cannot be set twice (validate refuses it in input).
func passInput(input map[string]any) map[string]any {
	body := make(map[string]any, len(input)+4)
	maps.Copy(body, input)
	return body
}

// setOnce sets body[key] to v, refusing a key input already set.
func setOnce(body map[string]any, key, attr string, v any) error {
	if _, ok := body[key]; ok {
		return fmt.Errorf("input sets %q, which %s sets too; set it once", key, attr)
	}
	body[key] = v
	return nil
}
