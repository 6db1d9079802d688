package replicate_test

import (
	"testing"

	"github.com/genform/genform/internal/provider/providertest"
	"github.com/genform/genform/internal/provider/replicate"
)

// TestLive makes one FLUX schnell image on Replicate itself, paid for
// with REPLICATE_API_TOKEN, when GENFORM_LIVE=1:
// go test -run TestLive ./internal/provider/replicate
// (the request is its registration's Live).
func TestLive(t *testing.T) { providertest.Live(t, replicate.Registration) }
