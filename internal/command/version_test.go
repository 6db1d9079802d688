package command

import (
	"runtime/debug"
	"testing"
)

// TestStamp: a release's own version wins; then the module's version (go
// install of a tag, or the pseudo-version of a checkout); then the
// commit; "dev" only when the build recorded nothing.
func TestStamp(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "4c0fa742d28ab7d5beea6751ad91c2c29a654180"}, {Key: "vcs.modified", Value: "true"}}
	tests := []struct {
		name string
		set  string
		bi   *debug.BuildInfo
		want string
	}{
		{"release build", "v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-x"}}, "v1.2.3"},
		{"go install of a tag", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{"build in a checkout", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261125222225-4c0fa742d28a+dirty"}, Settings: vcs}, "v0.0.0-20261125222225-4c0fa742d28a+dirty"},
		{"only the commit", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs}, "dev-4c0fa742d28a+dirty"},
		{"nothing recorded", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"no build info", "dev", nil, "dev"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stamp(tt.set, tt.bi); got != tt.want {
				t.Errorf("stamp = %q, want %q", got, tt.want)
			}
		})
	}
}
