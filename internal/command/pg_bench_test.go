package command_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genform/genform/statefile/pgstate/pgtest"
)

func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	if kept.dir != "" {
		os.RemoveAll(kept.dir)
	}
	os.Exit(code)
}

// usePostgres keeps the state of the configuration in dir in a new
// PostgreSQL database, which PG_CONN_STR names.
func usePostgres(b *testing.B, dir string) {
	b.Setenv("PG_CONN_STR", pgtest.ConnString(b))
	if err := os.WriteFile(filepath.Join(dir, "backend.gen.hcl"), []byte("genform {\n  backend \"pg\" {}\n}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
}

// benchPlanNoOp5k is the no-op plan of 5,000 resources, state and files
// present, with the state in the bbolt file or in PostgreSQL (a server on
// this machine's loopback).
func benchPlanNoOp5k(b *testing.B, pg bool) {
	dir := b.TempDir()
	writeImages(b, dir, 5000, blocks)
	if pg {
		usePostgres(b, dir)
	}
	seedStateWithHistory(b, dir, 0)
	if _, err := os.Stat(filepath.Join(dir, ".genform", "state.db")); pg == (err == nil) {
		b.Fatalf("the state file exists: %v, with the state in PostgreSQL: %v", err == nil, pg)
	}
	genformBinary(b) // built before the timer: b.Loop has no untimed first run
	var peak float64
	b.ResetTimer()
	for b.Loop() {
		out, rss := runBinary(b, dir, []string{"NO_COLOR=1", "GENFORM_BASE_URL="}, "plan", "-detailed-exitcode")
		if !strings.Contains(out, "No changes") {
			b.Fatalf("plan is not a no-op:\n%.2000s", out)
		}
		peak = max(peak, rss)
	}
	b.ReportMetric(peak, "peak-MiB")
}

// BenchmarkPlanNoOp5kFile and BenchmarkPlanNoOp5kPostgres compare the
// no-op plan of 5,000 resources on the two backends.
func BenchmarkPlanNoOp5kFile(b *testing.B)     { benchPlanNoOp5k(b, false) }
func BenchmarkPlanNoOp5kPostgres(b *testing.B) { benchPlanNoOp5k(b, true) }

// BenchmarkApply200ImagesPostgres is BenchmarkApply200Images with the
// state in PostgreSQL: each job's steps are transactions on the one
// connection, one at a time.
func BenchmarkApply200ImagesPostgres(b *testing.B) { benchApply200(b, true) }
