package runway_test

import (
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/providertest"
	"github.com/genform/genform/internal/provider/runway"
)

// TestLive makes one Gen-4 image on Runway itself, paid for with
// RUNWAYML_API_SECRET, when GENFORM_LIVE=1:
// go test -run TestLive ./internal/provider/runway
func TestLive(t *testing.T) {
	providertest.Live(t, "RUNWAYML_API_SECRET",
		func(c provider.Config) (provider.Provider, error) { return runway.New(c) },
		provider.Request{Kind: addrs.Image, Target: "gen4_image",
			Body: []byte(`{"promptText":"a lighthouse at dusk, watercolour","ratio":"1280:720"}`)})
}
