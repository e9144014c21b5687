package content_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/forkspace/forkspace/content"
	"pgregory.net/rapid"
)

// TestDraftModel runs random writes, truncations, commits and commits
// ahead against a plain byte slice and checks reads of the draft and of
// every committed manifest, and that committed manifests chunk the file
// canonically (also when commits ahead stored parts of it).
func TestDraftModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		opts := content.Options{
			Params:     small,
			InlineMax:  rapid.IntRange(1, 600).Draw(rt, "inlineMax"),
			SpillBytes: rapid.SampledFrom([]int64{512, 1 << 20}).Draw(rt, "spill"),
			CacheBytes: rapid.SampledFrom([]int64{4096, 1 << 20}).Draw(rt, "cache"),
		}
		e := newEnv(t, opts)
		model := randomBytes(rapid.Uint64().Draw(rt, "seed"), rapid.IntRange(0, 20_000).Draw(rt, "initial"))
		d := e.store.NewDraft(e.write(rt, model))
		defer func() { d.Discard() }()

		rt.Repeat(map[string]func(*rapid.T){
			"write": func(rt *rapid.T) {
				off := rapid.IntRange(0, len(model)+2000).Draw(rt, "off")
				p := randomBytes(rapid.Uint64().Draw(rt, "seed"), rapid.IntRange(1, 3000).Draw(rt, "len"))
				mustWrite(rt, d, p, int64(off))
				if end := off + len(p); end > len(model) {
					model = append(model, make([]byte, end-len(model))...)
				}
				copy(model[off:], p)
			},
			"truncate": func(rt *rapid.T) {
				size := rapid.IntRange(0, len(model)+3000).Draw(rt, "size")
				if err := d.Truncate(int64(size)); err != nil {
					rt.Fatal(err)
				}
				if size < len(model) {
					model = model[:size]
				} else {
					model = append(model, make([]byte, size-len(model))...)
				}
			},
			"commit ahead": func(rt *rapid.T) {
				m, inline, _, err := d.CommitAhead(context.Background())
				if err != nil {
					rt.Fatalf("commit ahead: %v", err)
				}
				e.meta.put(inline)
				if m.Size > int64(len(model)) || d.Size() != int64(len(model)) {
					rt.Fatalf("commit ahead stored %d bytes, draft size %d, model %d", m.Size, d.Size(), len(model))
				}
				if got := readAll(rt, e.reopen(), m); !bytes.Equal(got, model[:m.Size]) {
					rt.Fatal("bytes committed ahead differ from the model's prefix")
				}
				if m.Size < int64(len(model)) && !d.Dirty() {
					rt.Fatal("draft clean with bytes past what it committed ahead")
				}
			},
			"start ahead": func(rt *rapid.T) {
				// Runs beside the next writes; every other call waits
				// for it.
				if _, err := d.StartAhead(context.Background()); err != nil {
					rt.Fatalf("start ahead: %v", err)
				}
				if d.Size() != int64(len(model)) {
					rt.Fatalf("draft size %d after start ahead, model %d", d.Size(), len(model))
				}
			},
			"commit": func(rt *rapid.T) {
				m := e.commit(rt, d)
				checkManifest(rt, e, m, model)
				if rapid.Bool().Draw(rt, "fresh draft") {
					d.Discard()
					d = e.store.NewDraft(m)
				}
				if d.Dirty() {
					rt.Fatal("draft dirty right after commit")
				}
			},
			"": func(rt *rapid.T) {
				if d.Size() != int64(len(model)) {
					rt.Fatalf("draft size %d, model %d", d.Size(), len(model))
				}
				if len(model) == 0 {
					return
				}
				off := rapid.IntRange(0, len(model)-1).Draw(rt, "read off")
				n := rapid.IntRange(1, len(model)-off).Draw(rt, "read len")
				buf := make([]byte, n)
				if _, err := d.ReadAt(context.Background(), buf, int64(off)); err != nil {
					rt.Fatalf("draft read: %v", err)
				}
				if !bytes.Equal(buf, model[off:off+n]) {
					rt.Fatalf("draft read [%d,+%d) differs from model", off, n)
				}
			},
		})
	})
}

// checkManifest verifies m against the model bytes: contents through a
// cold store, the encoding, inline placement, hole sizes and that every
// data run is chunked as chunking it afresh would.
func checkManifest(rt *rapid.T, e *env, m content.Manifest, model []byte) {
	if m.Size != int64(len(model)) {
		rt.Fatalf("manifest size %d, model %d", m.Size, len(model))
	}
	if got := readAll(rt, e.reopen(), m); !bytes.Equal(got, model) {
		rt.Fatal("committed bytes differ from model")
	}
	if again, err := content.Decode(m.Encode()); err != nil || len(again.Extents) != len(m.Extents) {
		rt.Fatalf("manifest does not survive encoding: %v", err)
	}
	if inline := m.Size > 0 && m.Size <= int64(e.opts.InlineMax); m.Inline != inline {
		rt.Fatalf("%d-byte file with inline max %d: inline %v", m.Size, e.opts.InlineMax, m.Inline)
	}
	if m.Inline {
		return
	}
	var runStart int64
	var runSizes []int64
	checkRun := func(end int64) {
		want := fresh(model[runStart:end])
		if len(want) != len(runSizes) {
			rt.Fatalf("data run [%d,%d): %d chunks %v, fresh chunking gives %v", runStart, end, len(runSizes), runSizes, want)
		}
		for i := range want {
			if want[i] != runSizes[i] {
				rt.Fatalf("data run [%d,%d): chunks %v, fresh chunking gives %v", runStart, end, runSizes, want)
			}
		}
		runSizes = nil
	}
	pos := int64(0)
	for _, x := range m.Extents {
		if x.Hash.IsZero() {
			if x.Size < int64(small.MinSize) {
				rt.Fatalf("hole of %d bytes, shorter than min chunk %d", x.Size, small.MinSize)
			}
			if len(runSizes) > 0 {
				checkRun(pos)
			}
			runStart = pos + x.Size
		} else {
			runSizes = append(runSizes, x.Size)
		}
		pos += x.Size
	}
	if len(runSizes) > 0 {
		checkRun(pos)
	}
}

// fresh returns the chunk sizes of data chunked from scratch.
func fresh(data []byte) []int64 {
	var out []int64
	for len(data) > 0 {
		n := small.Cut(data)
		out = append(out, int64(n))
		data = data[n:]
	}
	return out
}

// TestCommitAheadLeavesTheLastChunkOpen: a commit ahead of a draft whose
// last chunk is an unchanged base chunk ending at the end of the file
// does not store that chunk as decided (the next bytes may move its
// end), so a file grown after it chunks as it would afresh. (It stored
// it: the file then kept a cut at its old end.)
func TestCommitAheadLeavesTheLastChunkOpen(t *testing.T) {
	e := newEnv(t, content.Options{Params: small, InlineMax: 1})
	data := randomBytes(0, 3000)
	d := e.store.NewDraft(e.write(t, data))
	defer d.Discard()
	mustWrite(t, d, data[:1], 0) // dirty, unchanged bytes
	ahead, _, _, err := d.CommitAhead(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ahead.Size == int64(len(data)) {
		t.Fatalf("commit ahead stored all %d bytes, the last chunk's end included", ahead.Size)
	}
	if err := d.Truncate(3030); err != nil {
		t.Fatal(err)
	}
	m := e.commit(t, d)
	want := e.write(t, append(data, make([]byte, 30)...))
	if len(m.Extents) != len(want.Extents) || m.Extents[len(m.Extents)-1] != want.Extents[len(want.Extents)-1] {
		t.Fatalf("grown after a commit ahead: %d extents ending %+v, fresh chunking %d ending %+v", len(m.Extents), m.Extents[len(m.Extents)-1], len(want.Extents), want.Extents[len(want.Extents)-1])
	}
}

// TestStartAhead: a large draft written with a commit ahead started in
// the background every few KiB reads back whole, commits to what writing
// it whole gives, and its commits' intents cover every chunk: nothing
// is left held once the caller releases what the calls returned; also
// when the draft spills to a file.
func TestStartAhead(t *testing.T) {
	for _, spill := range []int64{512, 0} {
		t.Run(fmt.Sprint("spill=", spill), func(t *testing.T) { testStartAhead(t, spill) })
	}
}

func testStartAhead(t *testing.T, spill int64) {
	ctx := context.Background()
	e := newEnv(t, content.Options{Params: small, InlineMax: 1, SpillBytes: spill})
	data := randomBytes(7, 200_000)
	d := e.store.NewDraft(content.Manifest{})
	var in content.Intents
	for off := 0; off < len(data); off += 3000 {
		mustWrite(t, d, data[off:min(off+3000, len(data))], int64(off))
		if off%(9000) == 0 {
			got, err := d.StartAhead(ctx)
			if err != nil {
				t.Fatal(err)
			}
			in = append(in, got...)
		}
	}
	buf := make([]byte, len(data))
	if _, err := d.ReadAt(ctx, buf, 0); err != nil || !bytes.Equal(buf, data) {
		t.Fatalf("draft reads back other bytes (%v)", err)
	}
	got, err := d.StartAhead(ctx) // one more, left running
	if err != nil {
		t.Fatal(err)
	}
	in = append(in, got...)
	m, _, got, err := d.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in = append(in, got...)
	if want := e.writeReleased(t, data); !slices.Equal(m.Extents, want.Extents) {
		t.Fatalf("manifest of %d extents, writing whole gives %d", len(m.Extents), len(want.Extents))
	}
	if err := d.Discard(); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Release(ctx, in); err != nil {
		t.Fatal(err)
	}
	if n := e.heldIntents(t); n != 0 {
		t.Fatalf("%d intents held after releasing what the commits returned", n)
	}
}

// TestStartAheadFails: a commit ahead whose puts fail in the background
// leaves the draft as it was before it: the next call that waits for it
// reports the failure (once), the bytes written before and during it
// still read back, nothing it took is held, and a commit after it stores
// the whole file. A draft discarded while one runs waits for it and
// releases what it holds.
func TestStartAheadFails(t *testing.T) {
	ctx := context.Background()
	data := randomBytes(8, 120_000)
	for _, then := range []string{"start ahead", "commit ahead", "commit", "discard"} {
		t.Run(then, func(t *testing.T) {
			e := newEnv(t, content.Options{Params: small, InlineMax: 1})
			d := e.store.NewDraft(content.Manifest{})
			defer d.Discard()
			mustWrite(t, d, data[:60_000], 0)
			if _, err := d.StartAhead(ctx); err != nil {
				t.Fatal(err)
			}
			// Fail the puts of the next commit ahead part way.
			mustWrite(t, d, data[60_000:90_000], 60_000)
			in, err := d.StartAhead(ctx)
			if err != nil {
				t.Fatal(err)
			}
			e.blobs.failAfter.Store(e.blobs.puts.Load() + 5)
			mustWrite(t, d, data[90_000:], 90_000) // beside the failing one
			mustWrite(t, d, data[:10], 0)          // over bytes it was given
			switch then {
			case "start ahead":
				_, err = d.StartAhead(ctx)
			case "commit ahead":
				_, _, _, err = d.CommitAhead(ctx)
			case "commit":
				_, _, _, err = d.Commit(ctx)
			case "discard":
				if err := d.Discard(); err != nil {
					t.Fatal(err)
				}
				if err := e.store.Release(ctx, in); err != nil {
					t.Fatal(err)
				}
				if n := e.heldIntents(t); n != 0 {
					t.Fatalf("%d intents held after discarding a draft", n)
				}
				return
			}
			if !errors.Is(err, errPut) {
				t.Fatalf("%s after a failed commit ahead: %v", then, err)
			}
			buf := make([]byte, len(data))
			if _, err := d.ReadAt(ctx, buf, 0); err != nil || !bytes.Equal(buf, data) {
				t.Fatalf("draft reads back other bytes after the failure (%v)", err)
			}
			e.blobs.failAfter.Store(0)
			m, _, got, err := d.Commit(ctx)
			if err != nil {
				t.Fatalf("commit after the failure was reported: %v", err)
			}
			if want := e.writeReleased(t, data); !slices.Equal(m.Extents, want.Extents) {
				t.Fatalf("manifest of %d extents, writing whole gives %d", len(m.Extents), len(want.Extents))
			}
			if err := e.store.Release(ctx, append(in, got...)); err != nil {
				t.Fatal(err)
			}
			if n := e.heldIntents(t); n != 0 {
				t.Fatalf("%d intents held after releasing what the commits returned", n)
			}
		})
	}
}
