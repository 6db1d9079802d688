package config

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// benchDir writes a configuration of n resources, as n blocks or as one
// block with for_each over n keys.
func benchDir(b *testing.B, n int, forEach bool) string {
	b.Helper()
	dir := b.TempDir()
	var sb strings.Builder
	sb.WriteString("variable \"style\" {\n  default = \"cinematic\"\n}\n\nlocals {\n  brand = \"ACME\"\n}\n\n")
	if forEach {
		sb.WriteString("locals {\n  keys = toset([\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&sb, "    \"k%05d\",\n", i)
		}
		sb.WriteString("  ])\n}\n\n")
		sb.WriteString("image \"many\" {\n  for_each = local.keys\n  prompt = \"picture ${each.key}, ${var.style}, ${local.brand}\"\n  seed = 7\n  image_number = 1\n}\n")
	} else {
		for i := 0; i < n; i++ {
			fmt.Fprintf(&sb, "image \"img%05d\" {\n  prompt       = \"picture %d, ${var.style}, ${local.brand}\"\n  seed         = %d\n  image_number = 1\n  aspect_ratio = \"1:1\"\n}\n\n", i, i, i)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "main.gen.hcl"), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

func benchLoadExpand(b *testing.B, forEach bool) {
	dir := benchDir(b, 10_000, forEach)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, diags := loadTest(dir, Options{})
		if diags.HasErrors() {
			b.Fatal(diags)
		}
		scope := Scope{}
		total := 0
		for _, r := range c.Resources {
			insts, diags := c.Expand(r, scope)
			if diags.HasErrors() {
				b.Fatal(diags)
			}
			total += len(insts)
		}
		if total != 10_000 {
			b.Fatalf("got %d instances, want 10000", total)
		}
	}
	b.StopTimer()
	b.ReportMetric(liveAfterLoad(b, dir), "live-MiB")
}

// liveAfterLoad is the heap a loaded configuration keeps, which a command
// holds from Load to its end.
func liveAfterLoad(b *testing.B, dir string) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c, _ := loadTest(dir, Options{})
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(c)
	return float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
}

// BenchmarkLoadExpand10kBlocks measures Load plus Expand of 10,000
// resources written as 10,000 blocks (the performance table of docs/performance.md), and the memory the
// loaded configuration keeps (live-MiB).
func BenchmarkLoadExpand10kBlocks(b *testing.B) { benchLoadExpand(b, false) }

// BenchmarkLoadExpand10kForEach measures the same 10,000 instances written
// as one block with for_each.
func BenchmarkLoadExpand10kForEach(b *testing.B) { benchLoadExpand(b, true) }
