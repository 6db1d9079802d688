package runway_test

import (
	"testing"

	"github.com/genform/genform/internal/provider/providertest"
	"github.com/genform/genform/internal/provider/runway"
)

// TestLive makes one Gen-4 image on Runway itself, paid for with
// RUNWAYML_API_SECRET, when GENFORM_LIVE=1:
// go test -run TestLive ./internal/provider/runway
// (the request is its registration's Live).
func TestLive(t *testing.T) { providertest.Live(t, runway.Registration) }
