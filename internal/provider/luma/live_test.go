package luma_test

import (
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/internal/provider/luma"
	"github.com/genform/genform/internal/provider/providertest"
)

// TestLive makes one Photon Flash image on Luma itself, paid for with
// LUMAAI_API_KEY, when GENFORM_LIVE=1:
// go test -run TestLive ./internal/provider/luma
func TestLive(t *testing.T) {
	providertest.Live(t, "LUMAAI_API_KEY",
		func(c provider.Config) (provider.Provider, error) { return luma.New(c) },
		provider.Request{Kind: addrs.Image, Target: "photon-flash-1",
			Body: []byte(`{"prompt":"a lighthouse at dusk, watercolour","aspect_ratio":"1:1"}`)})
}
