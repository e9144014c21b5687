package forkspace_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/vfs"
)

// BenchmarkForkN forks a 100k-file workspace 8 ways in one call, with
// 1,000 changes staged on it (folded, untimed, between samples): the
// fork-out of a best-of-N (goal: ≤ 100 ms). It then compares the 8 forks
// after 100 changes each (28 pair diffs).
//
//	go test -run '^$' -bench BenchmarkForkN -benchtime 20x .
func BenchmarkForkN(b *testing.B) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	ctx := context.Background()
	st := benchStore(b)
	w := textFiles(b, st, n)
	rng := rand.New(rand.NewPCG(5, 6))
	var forkOut, compare []time.Duration
	i := 0
	for b.Loop() {
		stage(b, w, n, 1000, rng)
		t0 := time.Now()
		forks, err := w.ForkN(ctx, 8, forkspace.ForkNOptions{Prefix: fmt.Sprintf("r%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		forkOut = append(forkOut, time.Since(t0))
		states := make([]string, len(forks))
		for k, f := range forks {
			stage(b, f, n, 100, rng)
			states[k] = f.Name()
		}
		t0 = time.Now()
		if _, err := st.Compare(ctx, states, vfs.DiffOptions{}); err != nil {
			b.Fatal(err)
		}
		compare = append(compare, time.Since(t0))
		fold(b, w)
		i++
	}
	reportLatency(b, "forkn8", forkOut)
	reportLatency(b, "compare8", compare)
}
