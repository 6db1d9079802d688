package words

import (
	"testing"

	"github.com/genform/genform/internal/operation/outcome"
)

// What operations go on despite comes as data; these are its words, as
// the commands have always printed them.
func TestOperationWarning(t *testing.T) {
	builtin := outcome.Reference{ID: "simulator"}
	remote := outcome.Reference{ID: "http://127.0.0.1:8787", BaseURL: "http://127.0.0.1:8787", From: "GENFORM_BASE_URL"}
	for _, c := range []struct {
		w    outcome.Warning
		want string
	}{
		{outcome.Warning{Code: outcome.SharedSimulator}, sharedSimulator},
		{outcome.Warning{Code: outcome.SwitchIgnored, Recorded: "http://127.0.0.1:8787", Configured: builtin},
			"the state was made with service http://127.0.0.1:8787, but this configuration uses the built-in simulator (GENFORM_BASE_URL and service.base_url are unset); destroy sends nothing to a service, so it deletes what the state records all the same."},
		{outcome.Warning{Code: outcome.SwitchImported, Recorded: "simulator", Configured: remote},
			"the state was made with the built-in simulator, but this configuration uses service http://127.0.0.1:8787 (set by GENFORM_BASE_URL); with -migrate-service the creation is imported from service http://127.0.0.1:8787 and the state will name it: plan then generates anew what was made with the built-in simulator."},
		{outcome.Warning{Code: outcome.SwitchMigrated, Recorded: "simulator", Configured: remote},
			"the state was made with the built-in simulator, but this configuration uses service http://127.0.0.1:8787 (set by GENFORM_BASE_URL); with -migrate-service everything made there is generated anew on service http://127.0.0.1:8787, and the state will name it."},
	} {
		if got := OperationWarning(c.w); got != c.want {
			t.Errorf("OperationWarning(%+v) =\n%s\nwant\n%s", c.w, got, c.want)
		}
	}
}
