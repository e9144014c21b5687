package chunk

import (
	"math/rand/v2"
	"testing"
)

// cutBytewise is Cut as FastCDC states it, one byte per step (Cut before
// its loop was unrolled): the model the unrolled scan must match.
func (p Params) cutBytewise(data []byte) int {
	if len(data) <= p.MinSize {
		return len(data)
	}
	n := min(len(data), p.MaxSize)
	norm := max(min(n, p.AvgSize), p.MinSize)
	small, large := p.masks()
	var fp uint64
	for i, b := range data[p.MinSize:norm] {
		fp = fp<<1 + gear[b]
		if fp&small == 0 {
			return p.MinSize + i + 1
		}
	}
	for i, b := range data[norm:n] {
		fp = fp<<1 + gear[b]
		if fp&large == 0 {
			return norm + i + 1
		}
	}
	return n
}

// TestCutMatchesBytewise checks Cut against the byte-at-a-time model on
// random inputs and parameters, including inputs of low entropy (few
// distinct bytes) where boundaries fall early and at every phase of the
// four-byte unrolling.
func TestCutMatchesBytewise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 3000 {
		minSize := SmallestSize + rng.IntN(200)
		avg := 1 << (7 + rng.IntN(5))
		for avg <= minSize {
			avg <<= 1
		}
		p := Params{MinSize: minSize, AvgSize: avg, MaxSize: avg*2 + rng.IntN(4*avg)}
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		data := make([]byte, rng.IntN(p.MaxSize+100))
		alphabet := 1 + rng.IntN(256)
		for i := range data {
			data[i] = byte(rng.IntN(alphabet))
		}
		for rest := data; len(rest) > 0; {
			got, want := p.Cut(rest), p.cutBytewise(rest)
			if got != want {
				t.Fatalf("iter %d, params %+v, %d bytes: Cut = %d, bytewise = %d", iter, p, len(rest), got, want)
			}
			rest = rest[got:]
		}
	}
}

// BenchmarkScan compares the unrolled scan with the byte-at-a-time model
// in one run (the machine is shared: only the ratio means anything).
func BenchmarkScan(b *testing.B) {
	data := make([]byte, 64<<20)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, tc := range []struct {
		name string
		cut  func(Params, []byte) int
	}{{"unrolled", Params.Cut}, {"bytewise", Params.cutBytewise}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				for rest := data; len(rest) > 0; {
					rest = rest[tc.cut(DefaultParams, rest):]
				}
			}
		})
	}
}
