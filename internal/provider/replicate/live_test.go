package replicate_test

import (
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/providertest"
	"github.com/genform/genform/internal/provider/replicate"
)

// TestLive makes one FLUX schnell image on Replicate itself, paid for
// with REPLICATE_API_TOKEN, when GENFORM_LIVE=1:
// go test -run TestLive ./internal/provider/replicate
func TestLive(t *testing.T) {
	providertest.Live(t, "REPLICATE_API_TOKEN",
		func(c provider.Config) (provider.Provider, error) { return replicate.New(c) },
		provider.Request{Kind: addrs.Image, Target: "black-forest-labs/flux-schnell",
			Body: []byte(`{"prompt":"a lighthouse at dusk, watercolour","num_outputs":1,"aspect_ratio":"1:1"}`)})
}
