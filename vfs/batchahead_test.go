package vfs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/forkspace/forkspace/blob/fileblob"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// aheadFiles is enough 15 KiB (inline) files for a batch to store their
// bodies ahead of its commit (past 16 MiB).
const aheadFiles = 1200

func aheadName(i int) string { return fmt.Sprintf("d%d/f%04d", i%7, i) }

// writeAhead writes the aheadFiles files through b.
func writeAhead(t *testing.T, ctx context.Context, b *vfs.FS) {
	t.Helper()
	for i := range aheadFiles {
		if i < 7 {
			must(t, b.MkdirAll(ctx, fmt.Sprintf("d%d", i), 0o755))
		}
		must(t, b.WriteFile(ctx, aheadName(i), randBytes(uint64(i), 15<<10), 0o644))
	}
}

// readAhead checks the files writeAhead wrote.
func readAhead(t *testing.T, ctx context.Context, f *vfs.FS) {
	t.Helper()
	for i := range aheadFiles {
		data, err := f.ReadFile(ctx, aheadName(i))
		if err != nil || !bytes.Equal(data, randBytes(uint64(i), 15<<10)) {
			t.Fatalf("%s: %d bytes, %v", aheadName(i), len(data), err)
		}
	}
}

// stored counts the objects list (meta.Tx.Nodes, meta.Tx.InlineBodies)
// finds in the store's metadata.
func stored(t *testing.T, ctx context.Context, m meta.Store, list func(meta.Tx, func(meta.ObjectInfo) error) error) int {
	t.Helper()
	n := 0
	err := m.View(ctx, func(tx meta.Tx) error {
		return list(tx, func(meta.ObjectInfo) error { n++; return nil })
	})
	must(t, err)
	return n
}

// aheadCases are the batches of writeAhead: one that holds its overlay
// to the commit and stores only bodies ahead, and one that folds ahead
// too (past 4 × FoldRows keys), storing tree nodes under its intents and
// committing a new head.
var aheadCases = []struct {
	name   string
	opts   vfs.Options
	folded bool
}{
	{"bodies", vfs.Options{}, false},
	{"folded", vfs.Options{FoldRows: 64}, true},
}

// collect runs a collection with no grace and returns what it deleted and
// what it kept for uploads in progress.
func collect(t *testing.T, ctx context.Context, e *env) (deleted, held gc.Counts) {
	t.Helper()
	blobs, err := fileblob.Open(filepath.Join(e.dir, "blobs"))
	must(t, err)
	defer blobs.Close()
	p, err := gc.NewPlan(ctx, gc.Deps{Meta: e.deps.Meta, Blobs: blobs, KV: e.deps.KV}, gc.Options{Grace: gc.NoGrace, Logger: slog.New(slog.DiscardHandler)})
	must(t, err)
	if p.Young != (gc.Counts{}) {
		t.Fatalf("with no grace the plan keeps %+v as young", p.Young)
	}
	got, err := p.Execute(ctx)
	must(t, err)
	return got, p.Held
}

// TestBatchStoresBodiesAhead: a batch holding more than 16 MiB of inline
// bodies stores them before its commit, under an upload intent, and so
// does one that folds ahead with its tree nodes, so a collection with no
// grace that runs meanwhile (nothing names them yet) keeps them; the
// parent sees nothing of the batch until it commits, and the committed
// batch reads back whole.
func TestBatchStoresBodiesAhead(t *testing.T) {
	for _, c := range aheadCases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, c.opts)
			f := e.open(e.ws)
			must(t, f.WriteFile(ctx, "before", []byte("staged"), 0o644))
			bodies, nodes := stored(t, ctx, e.deps.Meta, meta.Tx.InlineBodies), stored(t, ctx, e.deps.Meta, meta.Tx.Nodes)
			err := f.Batch(ctx, func(b *vfs.FS) error {
				writeAhead(t, ctx, b)
				if n := stored(t, ctx, e.deps.Meta, meta.Tx.InlineBodies) - bodies; n < aheadFiles/2 {
					t.Fatalf("%d bodies stored before the commit, want most of %d", n, aheadFiles)
				}
				if n := stored(t, ctx, e.deps.Meta, meta.Tx.Nodes) - nodes; (n > 0) != c.folded {
					t.Fatalf("%d tree nodes stored before the commit", n)
				}
				if _, err := f.Stat(ctx, "d0"); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("the parent sees d0 before the commit: %v", err)
				}
				got, held := collect(t, ctx, e)
				if got.Bodies != 0 || got.Nodes != 0 {
					t.Fatalf("a collection during the batch deleted %d inline bodies and %d nodes", got.Bodies, got.Nodes)
				}
				if held.Bodies < aheadFiles/2 || (held.Nodes > 0) != c.folded {
					t.Fatalf("the plan during the batch holds %d bodies and %d nodes for it", held.Bodies, held.Nodes)
				}
				return nil
			})
			must(t, err)
			readAhead(t, ctx, f)
			again := e.reopen(f)
			readAhead(t, ctx, again)
			if data, err := again.ReadFile(ctx, "before"); err != nil || string(data) != "staged" {
				t.Fatalf("the delta before the batch: %q, %v", data, err)
			}
			blobs, err := fileblob.Open(filepath.Join(e.dir, "blobs"))
			must(t, err)
			defer blobs.Close()
			rep, err := gc.Check(ctx, gc.Deps{Meta: e.deps.Meta, Blobs: blobs, KV: e.deps.KV}, gc.Options{})
			must(t, err)
			if !rep.Clean() || rep.Orphans.Bodies != 0 {
				t.Fatalf("after the batch: problems %v, %d orphan bodies", rep.Problems, rep.Orphans.Bodies)
			}
		})
	}
}

// TestBatchStoredAheadFails: a batch that fails after storing bodies (and
// nodes) ahead leaves the workspace as it was and releases its intent, so
// they are garbage for the next collection; one that dies (a panic stands
// for a crash: nothing releases the intent) leaves nothing visible either,
// after a restart.
func TestBatchStoredAheadFails(t *testing.T) {
	for _, c := range aheadCases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, c.opts)
			f := e.open(e.ws)
			before := stored(t, ctx, e.deps.Meta, meta.Tx.InlineBodies)
			boom := errors.New("refused")
			err := f.Batch(ctx, func(b *vfs.FS) error {
				writeAhead(t, ctx, b)
				return boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("batch: %v", err)
			}
			if _, err := f.Stat(ctx, "d0"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a failed batch left d0: %v", err)
			}
			if got, _ := collect(t, ctx, e); got.Bodies < aheadFiles/2 || (got.Nodes > 0) != c.folded {
				t.Fatalf("the collection after a failed batch deleted %d bodies and %d nodes, want its stored ones", got.Bodies, got.Nodes)
			}
			if n := stored(t, ctx, e.deps.Meta, meta.Tx.InlineBodies); n != before {
				t.Fatalf("%d inline bodies left, want %d", n, before)
			}

			func() {
				defer func() {
					if recover() == nil {
						t.Fatal("no panic")
					}
				}()
				_ = f.Batch(ctx, func(b *vfs.FS) error {
					writeAhead(t, ctx, b)
					panic("crash")
				})
			}()
			g := e.reopen(f)
			ents, err := g.ReadDir(ctx, ".")
			if err != nil || len(ents) != 0 {
				t.Fatalf("after a crash mid-batch the root holds %d entries (%v)", len(ents), err)
			}
			if got, held := collect(t, ctx, e); got.Bodies != 0 || got.Nodes != 0 || held.Bodies < aheadFiles/2 {
				t.Fatalf("a collection deleted %d bodies and %d nodes held by a pending intent (it counts %d held)", got.Bodies, got.Nodes, held.Bodies)
			}
		})
	}
}
