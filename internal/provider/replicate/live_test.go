package replicate_test

import (
	"testing"

	"github.com/genform/genform/internal/provider/providertest"
)

// TestLive makes one FLUX schnell image on Replicate itself, paid for
// with REPLICATE_API_TOKEN, when GENFORM_LIVE=1:
// go test -run TestLive ./internal/provider/replicate
// (the request is the row "replicate" of providertest's live generations).
func TestLive(t *testing.T) { providertest.Live(t, "replicate") }
