package luma_test

import (
	"testing"

	"github.com/genform/genform/internal/provider/luma"
	"github.com/genform/genform/internal/provider/providertest"
)

// TestLive makes one Photon Flash image on Luma itself, paid for with
// LUMAAI_API_KEY, when GENFORM_LIVE=1:
// go test -run TestLive ./internal/provider/luma
// (the request is its registration's Live).
func TestLive(t *testing.T) { providertest.Live(t, luma.Registration) }
