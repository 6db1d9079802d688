package secrets

import (
	"github.com/genform/genform/config"
	"github.com/genform/genform/statefile"
)

// RecordAttrs is the request a record was made with, under the
// attribute names of the configuration; an empty map when the request
// cannot be read back.
func RecordAttrs(rec *statefile.Resource) map[string]any {
	if len(rec.Request) == 0 {
		return map[string]any{}
	}
	m, err := config.FlattenRequest(rec.Endpoint, rec.Request)
	if err != nil || m == nil {
		return map[string]any{}
	}
	return m
}

// FailureAttrs is the request of a failed generation under the
// configuration's attribute names.
func FailureAttrs(f *statefile.Failure) map[string]any {
	m, err := config.FlattenRequest(f.Endpoint, f.Request)
	if err != nil || m == nil {
		return map[string]any{}
	}
	return m
}
