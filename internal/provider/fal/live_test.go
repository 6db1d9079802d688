package fal_test

import (
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/fal"
	"github.com/genform/genform/internal/provider/providertest"
)

// TestLive makes one FLUX [schnell] image on fal itself, paid for with
// FAL_KEY, when GENFORM_LIVE=1: go test -run TestLive ./internal/provider/fal
func TestLive(t *testing.T) {
	providertest.Live(t, "FAL_KEY",
		func(c provider.Config) (provider.Provider, error) { return fal.New(c) },
		provider.Request{Kind: addrs.Image, Target: "fal-ai/flux/schnell",
			Body: []byte(`{"prompt":"a lighthouse at dusk, watercolour","num_images":1,"image_size":"square"}`)})
}
