package conformance_test

import (
	"testing"

	"github.com/genform/genform/internal/provider/all"
)

// Every model's dates, in every provider's table, are written as a day
// and in order: validate and plan compare them with today.
func TestTablesLifecycle(t *testing.T) {
	for _, r := range all.Providers {
		for _, id := range r.Table.ModelIDs() {
			if why := r.Table.Models[id].CheckLifecycle(); why != "" {
				t.Errorf("%s model %s %s", r.Name(), id, why)
			}
		}
	}
}
