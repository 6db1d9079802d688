package e2e

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	lumasim "github.com/genform/genform/internal/simulator/luma"
	openaisim "github.com/genform/genform/internal/simulator/openai"
	runwaysim "github.com/genform/genform/internal/simulator/runway"
	"github.com/genform/genform/internal/simulator/simkit"
)

// TestExampleProviders runs examples/providers as its comment tells a
// user without keys to: against the simulators of OpenAI's, Runway's and
// Luma's APIs, named by the base URL variables the example reads. The
// OpenAI image reaches Runway as a data: URI, the Luma images reach the
// Luma video by their URLs; a second plan finds nothing to do.
func TestExampleProviders(t *testing.T) {
	t.Parallel()
	serve := func(h simkit.Handler, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	opts := simkit.Options{Latency: 200 * time.Millisecond}
	env := childEnv(
		"OPENAI_BASE_URL="+serve(openaisim.New(opts)), "OPENAI_API_KEY=sim",
		"RUNWAY_BASE_URL="+serve(runwaysim.New(opts)), "RUNWAYML_API_SECRET=sim",
		"LUMA_BASE_URL="+serve(lumasim.New(opts)), "LUMAAI_API_KEY=sim",
	)
	work := copyExample(t, filepath.Join(moduleRoot(t), "examples", "providers"))
	runGenform(t, env, 0, "-chdir="+work, "validate")
	plan := runGenform(t, env, 0, "-chdir="+work, "plan")
	for _, want := range []string{"Plan: 5 to generate (files: 3 images, 2 videos)", "Service: OpenAI at ", "; Runway at ", "; Luma at "} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan does not say %q:\n%s", want, plan)
		}
	}
	out := runGenform(t, env, 0, "-chdir="+work, "apply", "-auto-approve")
	if !strings.Contains(out, "Apply complete! 5 generated") {
		t.Errorf("apply said:\n%s", out)
	}
	// Runway was sent the OpenAI image itself, as its data: URI.
	state := runGenform(t, env, 0, "-chdir="+work, "state", "show", "video.harbour_waves")
	if !strings.Contains(state, "data:image/png;base64,") {
		t.Errorf("Runway's request does not carry the image as a data: URI:\n%s", state)
	}
	runGenform(t, env, 0, "-chdir="+work, "plan", "-detailed-exitcode")
}
