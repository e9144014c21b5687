package forkspace_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
)

// BenchmarkReadState reads 100 files of a 100k-file workspace as it is
// now and as it was 1,000 audited steps back (each step one write; the
// default fold threshold, so folds happen in between as they would), the
// same files each time, opening each state afresh: reading the past
// should cost what reading the head does (goal: ratio < 1.5).
//
//	go test -run '^$' -bench BenchmarkReadState -benchtime 50x .
func BenchmarkReadState(b *testing.B) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	ctx := context.Background()
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	textFiles(b, st, n)
	aw, err := st.Audited(ctx, "base", forkspace.AuditOptions{Actor: audit.Actor{Name: "bench"}})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for k := range 1001 { // ~1000 is the state after the first
		i := rng.IntN(n)
		if err := aw.WriteFile(ctx, fmt.Sprintf("d%04d/f%06d", i/100, i), []byte(fmt.Sprintf("step %d\n", k)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var names []string
	for range 100 {
		i := rng.IntN(n)
		names = append(names, fmt.Sprintf("d%04d/f%06d", i/100, i))
	}
	read := func(state string) time.Duration {
		t0 := time.Now()
		f, err := st.Snapshot(ctx, state)
		if err != nil {
			b.Fatal(err)
		}
		for _, name := range names {
			if _, err := f.ReadFile(ctx, name); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(t0)
	}
	var head, past []time.Duration
	for b.Loop() {
		head = append(head, read("base"))
		past = append(past, read("base@~1000"))
	}
	p50 := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2]) / 1e6
	}
	b.ReportMetric(p50(head), "head-p50-ms")
	b.ReportMetric(p50(past), "back1000-p50-ms")
	b.ReportMetric(p50(past)/p50(head), "ratio")
}
