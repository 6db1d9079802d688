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

// mapBody builds the body of a model of provider: input as it is, and
// each common attribute the block sets under the field field names for
// it, with the value it gives ("" refuses the attribute: genform does not
// map it for this model).
func mapBody(provider, model string, common, input map[string]any, field func(name string, v any) (string, any, error)) (map[string]any, error) {
	body := passInput(input)
	for _, name := range CommonAttributes {
		v, ok := common[name]
		if !ok {
			continue
		}
		key, value, err := field(name, v)
		if err != nil {
			return nil, err
		}
		if key == "" {
			return nil, fmt.Errorf("genform does not map %s to a field of %s model %s; set the model's own field in input", name, provider, model)
		}
		if err := setOnce(body, key, name, value); err != nil {
			return nil, err
		}
	}
	return body, nil
}

// setOnce sets body[key] to v, refusing a key input already set.
func setOnce(body map[string]any, key, attr string, v any) error {
	if _, ok := body[key]; ok {
		return fmt.Errorf("input sets %q, which %s sets too; set it once", key, attr)
	}
	body[key] = v
	return nil
}
