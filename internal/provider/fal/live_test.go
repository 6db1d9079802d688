package fal_test

import (
	"testing"

	"github.com/genform/genform/internal/provider/fal"
	"github.com/genform/genform/internal/provider/providertest"
)

// TestLive makes one FLUX [schnell] image on fal itself, paid for with
// FAL_KEY, when GENFORM_LIVE=1: go test -run TestLive ./internal/provider/fal
// (the request is its registration's Live).
func TestLive(t *testing.T) { providertest.Live(t, fal.Registration) }
