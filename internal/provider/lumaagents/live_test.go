package lumaagents_test

import (
	"testing"

	"github.com/genform/genform/internal/provider/lumaagents"
	"github.com/genform/genform/internal/provider/providertest"
)

// TestLive makes one uni-1 image on Luma's Agents API itself, paid for
// with LUMA_AGENTS_API_KEY, when GENFORM_LIVE=1:
// go test -run TestLive ./internal/provider/lumaagents
// (the request is its registration's Live).
func TestLive(t *testing.T) { providertest.Live(t, lumaagents.Registration) }
