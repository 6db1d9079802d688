package e2e

import (
	"testing"

	"github.com/genform/genform/internal/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
