package operation

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/operation/outcome"
)

// A service switch an operation goes on with is handed to its Warn as
// data, naming both services; the words are the views'.
func TestCheckServiceWarnsWithData(t *testing.T) {
	var got []outcome.Warning
	w := &Workspace{
		Env:      Env{Warn: func(wn outcome.Warning) { got = append(got, wn) }},
		Config:   &config.Config{},
		Endpoint: Endpoint{ID: "http://127.0.0.1:8787", BaseURL: "http://127.0.0.1:8787", From: "GENFORM_BASE_URL"},
	}
	configured := outcome.Reference{ID: "http://127.0.0.1:8787", BaseURL: "http://127.0.0.1:8787", From: "GENFORM_BASE_URL"}
	for _, c := range []struct {
		command  string
		migrate  bool
		wantFrom string
		want     outcome.WarningCode
	}{
		{"destroy", false, "", outcome.SwitchIgnored},
		{"import", true, "simulator", outcome.SwitchImported},
		{"plan", true, "simulator", outcome.SwitchMigrated},
	} {
		got = nil
		from, err := w.checkService(c.command, "simulator", c.migrate)
		if err != nil || from != c.wantFrom {
			t.Errorf("%s: checkService = %q, %v; want %q, nil", c.command, from, err, c.wantFrom)
		}
		want := []outcome.Warning{{Code: c.want, Recorded: "simulator", Configured: configured}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: warnings (-want +got):\n%s", c.command, diff)
		}
	}
	// Without -migrate-service the switch is an error, and no warning.
	got = nil
	if _, err := w.checkService("apply", "simulator", false); err == nil || len(got) > 0 {
		t.Errorf("apply without -migrate-service: err %v, warnings %v", err, got)
	}
}
