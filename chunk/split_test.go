package chunk_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"testing"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/chunk"
)

var small = chunk.Params{MinSize: 64, AvgSize: 256, MaxSize: 1024}

func randomBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, seed))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// sizes returns the chunk sizes Split produces for data.
func sizes(t testing.TB, data []byte, p chunk.Params) []int {
	t.Helper()
	var got []int
	err := chunk.Split(bytes.NewReader(data), p, func(c []byte) error {
		got = append(got, len(c))
		return nil
	})
	if err != nil {
		t.Fatalf("split: %v", err)
	}
	return got
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		p    chunk.Params
		ok   bool
	}{
		{"default", chunk.DefaultParams, true},
		{"small", small, true},
		{"zero", chunk.Params{}, false},
		{"min too small", chunk.Params{MinSize: 32, AvgSize: 256, MaxSize: 1024}, false},
		{"max too large", chunk.Params{MinSize: 64, AvgSize: 256, MaxSize: 2 << 30}, false},
		{"avg not power of two", chunk.Params{MinSize: 64, AvgSize: 300, MaxSize: 1024}, false},
		{"avg below min", chunk.Params{MinSize: 512, AvgSize: 256, MaxSize: 1024}, false},
		{"avg above max", chunk.Params{MinSize: 64, AvgSize: 2048, MaxSize: 1024}, false},
		{"min equals avg", chunk.Params{MinSize: 256, AvgSize: 256, MaxSize: 1024}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if tt.ok && err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if !tt.ok && !errors.Is(err, fs.ErrInvalid) {
				t.Fatalf("Validate = %v, want fs.ErrInvalid", err)
			}
			if !tt.ok {
				if err := chunk.Split(bytes.NewReader(nil), tt.p, nil); !errors.Is(err, fs.ErrInvalid) {
					t.Fatalf("Split = %v, want fs.ErrInvalid", err)
				}
			}
		})
	}
}

// TestFormatIsPinned records the boundaries of a fixed input under the
// default and a small parameter set. Chunk boundaries are part of the
// on-disk format: if this test fails, stored files no longer dedup with new
// writes of the same bytes.
func TestFormatIsPinned(t *testing.T) {
	for _, tc := range []struct {
		p    chunk.Params
		n    int
		want []int
	}{
		{chunk.DefaultParams, 12 << 20, []int{2241656, 1251136, 1137591, 1084177, 1066264, 1051961, 1631959, 535968, 1374367, 1189809, 18024}},
		{chunk.Params{MinSize: 1 << 10, AvgSize: 4 << 10, MaxSize: 16 << 10}, 64 << 10, []int{6062, 2790, 5706, 2185, 5531, 3030, 6428, 4493, 4722, 4267, 4467, 5037, 2975, 3150, 4693}},
	} {
		got := sizes(t, randomBytes(42, tc.n), tc.p)
		if !equal(got, tc.want) {
			t.Errorf("params %+v: boundaries moved:\ngot  %#v\nwant %#v", tc.p, got, tc.want)
		}
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestShiftResync checks the property dedup relies on: inserting bytes near
// the start of a file leaves the boundaries after it unchanged.
func TestShiftResync(t *testing.T) {
	data := randomBytes(7, 200*small.AvgSize)
	edited := append([]byte("inserted!"), data...)
	tail := func(d []byte) map[cas.Hash]bool {
		m := map[cas.Hash]bool{}
		_ = chunk.Split(bytes.NewReader(d), small, func(c []byte) error {
			m[cas.Sum(c)] = true
			return nil
		})
		return m
	}
	a, b := tail(data), tail(edited)
	shared := 0
	for h := range a {
		if b[h] {
			shared++
		}
	}
	if shared < len(a)-5 {
		t.Fatalf("only %d of %d chunks survive a 9-byte insert at the front", shared, len(a))
	}
}

func TestSplitStopsOnError(t *testing.T) {
	stop := errors.New("stop")
	calls := 0
	err := chunk.Split(bytes.NewReader(randomBytes(1, 10*small.MaxSize)), small, func([]byte) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("Split = %v after %d calls, want stop after 1", err, calls)
	}
	readErr := errors.New("disk on fire")
	err = chunk.Split(io.MultiReader(bytes.NewReader(make([]byte, 10)), errReader{readErr}), small, func([]byte) error { return nil })
	if !errors.Is(err, readErr) {
		t.Fatalf("Split = %v, want read error", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func FuzzSplit(f *testing.F) {
	f.Add([]byte{}, uint8(1))
	f.Add([]byte("hello"), uint8(3))
	f.Add(randomBytes(1, 5000), uint8(7))
	f.Add(bytes.Repeat([]byte{0}, 4096), uint8(2))
	f.Add(randomBytes(2, 1025), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, readSize uint8) {
		var out []byte
		var lens []int
		r := &chopReader{data: data, n: int(readSize)%64 + 1}
		err := chunk.Split(r, small, func(c []byte) error {
			out = append(out, c...)
			lens = append(lens, len(c))
			return nil
		})
		if err != nil {
			t.Fatalf("split: %v", err)
		}
		if !bytes.Equal(out, data) {
			t.Fatalf("chunks do not concatenate to the input")
		}
		for i, n := range lens {
			last := i == len(lens)-1
			if n > small.MaxSize || n == 0 || (!last && n < small.MinSize) {
				t.Fatalf("chunk %d of %d has size %d, outside [%d, %d]", i, len(lens), n, small.MinSize, small.MaxSize)
			}
		}
		// Next on any prefix agrees with Cut on the whole input.
		if len(data) > 0 {
			want := small.Cut(data)
			for k := range len(data) + 1 {
				if n, ok := small.Next(data[:k], k == len(data)); ok && n != want {
					t.Fatalf("Next on %d of %d bytes = %d, Cut = %d", k, len(data), n, want)
				}
			}
		}
		// Boundaries do not depend on how the input is read.
		if want := sizes(t, data, small); !equal(lens, want) {
			t.Fatalf("short reads changed boundaries: %v vs %v", lens, want)
		}
	})
}

// chopReader returns at most n bytes per Read.
type chopReader struct {
	data []byte
	n    int
}

func (r *chopReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.n)], r.data)
	r.data = r.data[n:]
	return n, nil
}

const benchSize = 64 << 20

func BenchmarkCut(b *testing.B) {
	data := randomBytes(3, benchSize)
	p := chunk.DefaultParams
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		for rest := data; len(rest) > 0; {
			rest = rest[p.Cut(rest):]
		}
	}
}

func BenchmarkCutHash(b *testing.B) {
	data := randomBytes(4, benchSize)
	p := chunk.DefaultParams
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		for rest := data; len(rest) > 0; {
			n := p.Cut(rest)
			_ = cas.Sum(rest[:n])
			rest = rest[n:]
		}
	}
}

func BenchmarkSplitHash(b *testing.B) {
	data := randomBytes(5, benchSize)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		err := chunk.Split(bytes.NewReader(data), chunk.DefaultParams, func(c []byte) error {
			_ = cas.Sum(c)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
