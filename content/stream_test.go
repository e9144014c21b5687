package content_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/forkspace/forkspace/chunk"
	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/meta"
	"pgregory.net/rapid"
)

// medium chunk parameters: a few chunks per window.
var medium = chunk.Params{MinSize: 16 << 10, AvgSize: 64 << 10, MaxSize: 256 << 10}

// randomReads serves data in reads of random sizes up to max, as a
// network connection does.
type randomReads struct {
	data []byte
	r    *rand.Rand
	max  int
}

func (r *randomReads) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.data), 1+r.r.IntN(r.max))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// writeFrom streams data through WriteFrom and checks it stored what
// Write stores for the same bytes, and that the file reads back.
func (e *env) writeFrom(t fataler, data []byte, seed uint64, maxRead int) {
	t.Helper()
	ctx := context.Background()
	src := &randomReads{data: data, r: rand.New(rand.NewPCG(seed, 2)), max: maxRead}
	n, m, inline, in, err := e.store.WriteFrom(ctx, src)
	if err != nil || n != int64(len(data)) {
		t.Fatalf("write from a stream of %d bytes: %d, %v", len(data), n, err)
	}
	e.meta.put(inline)
	want, wantInline, _, err := e.store.Write(ctx, data)
	if err != nil {
		t.Fatalf("write %d bytes: %v", len(data), err)
	}
	if m.Size != want.Size || m.Inline != want.Inline || !slices.Equal(m.Extents, want.Extents) || len(inline) != len(wantInline) {
		t.Fatalf("%d bytes: streamed manifest %d extents (inline %v), written %d (inline %v)", len(data), len(m.Extents), m.Inline, len(want.Extents), want.Inline)
	}
	if len(m.Extents) > 1 && len(in) == 0 {
		t.Fatalf("%d bytes in %d chunks: no intent held", len(data), len(m.Extents))
	}
	if got := readAll(t, e.reopen(), m); !bytes.Equal(got, data) {
		t.Fatalf("%d bytes: read back differs", len(data))
	}
}

// TestWriteFromModel: a stream, whatever its size and however its reads
// split it, is stored as Write stores the same bytes (inline below the
// limit, the same chunks above).
func TestWriteFromModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := newEnv(t, content.Options{
			Params:    rapid.SampledFrom([]chunk.Params{small, medium}).Draw(rt, "params"),
			InlineMax: rapid.IntRange(1, 64<<10).Draw(rt, "inlineMax"),
		})
		n := rapid.OneOf(rapid.IntRange(0, 2000), rapid.IntRange(250<<10, 270<<10), rapid.IntRange(0, 600<<10)).Draw(rt, "size")
		e.writeFrom(rt, randomBytes(rapid.Uint64().Draw(rt, "data"), n), rapid.Uint64().Draw(rt, "reads"), rapid.IntRange(1, 300<<10).Draw(rt, "maxRead"))
	})
}

// TestWriteFromWindows streams files larger than the chunker's windows
// (16 MiB) with the default parameters, so undecided tails move between
// windows.
func TestWriteFromWindows(t *testing.T) {
	e := newEnv(t, content.Options{Params: chunk.DefaultParams})
	for i, n := range []int{16 << 20, 16<<20 + 1, 41<<20 + 12345} {
		e.writeFrom(t, randomBytes(uint64(100+i), n), uint64(i), 1<<20)
	}
	// Zeros cut at MaxSize only.
	e.writeFrom(t, make([]byte, 37<<20), 9, 3<<20)
}

// TestWriteFromFails: a stream whose reader fails, or whose context ends,
// fails with that error and holds no upload intent.
func TestWriteFromFails(t *testing.T) {
	e := newEnv(t, content.Options{Params: medium})
	ctx := context.Background()
	data := randomBytes(5, 3<<20)
	boom := errors.New("boom")
	for _, at := range []int{0, 100, 300 << 10, 2 << 20} {
		r := io.MultiReader(bytes.NewReader(data[:at]), errAfter{boom})
		if _, _, _, _, err := e.store.WriteFrom(ctx, r); !errors.Is(err, boom) {
			t.Fatalf("reader failing after %d bytes: %v", at, err)
		}
		// A connection cut short is a failure, not a short file.
		r = io.MultiReader(bytes.NewReader(data[:at]), errAfter{io.ErrUnexpectedEOF})
		if _, _, _, _, err := e.store.WriteFrom(ctx, r); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("stream cut after %d bytes: %v", at, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	r := io.MultiReader(bytes.NewReader(data[:1<<20]), readFunc(func([]byte) (int, error) {
		cancel()
		return 0, io.EOF
	}), bytes.NewReader(data[1<<20:]))
	if _, _, _, _, err := e.store.WriteFrom(cctx, r); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled stream: %v", err)
	}
	err := e.meta.View(ctx, func(tx meta.Tx) error {
		return tx.Intents(func(in meta.Intent) error {
			if !in.Released {
				t.Errorf("intent %d held after failed streams", in.ID)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

type errAfter struct{ err error }

func (r errAfter) Read([]byte) (int, error) { return 0, r.err }

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }
