package apply

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// BenchmarkApplyPerJob: the engine's own cost per generation, against a
// service in the process that answers at once (the fake service: no
// network, no latency, a few bytes per output), so what is measured is
// genform's work per job: the intent and its id committed before polling,
// the polls, the download written beside its final name and renamed, the
// record committed, the events. Reported per job: wall time at
// parallelism 50 and the process's CPU time (target: under 1 ms).
func BenchmarkApplyPerJob(b *testing.B) {
	const n = 500
	src := fmt.Sprintf("image \"tile\" {\n  count        = %d\n  prompt       = \"tile ${count.index}\"\n  image_number = 1\n}\n", n)
	var cpu time.Duration
	var wall time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		w := newApplyDir(b, &fakeService{})
		w.parallelism = 50
		p := w.plan(src)
		before := cpuTime(b)
		start := time.Now()
		b.StartTimer()
		res := w.apply(context.Background(), p)
		b.StopTimer()
		wall += time.Since(start)
		cpu += cpuTime(b) - before
		if len(res.Generated) != n || len(res.Failed) > 0 {
			b.Fatalf("generated %d, failed %v; want %d generated", len(res.Generated), res.Failed, n)
		}
	}
	jobs := float64(b.N * n)
	b.ReportMetric(float64(wall.Microseconds())/jobs/1000, "wall-ms/job")
	b.ReportMetric(float64(cpu.Microseconds())/jobs/1000, "cpu-ms/job")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
