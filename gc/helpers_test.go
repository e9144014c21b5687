package gc_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/blob/fileblob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/chunk"
	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
	"github.com/forkspace/forkspace/vfs"
)

// inlineMax keeps test files small: larger files become blobs.
const inlineMax = 512

// quiet discards the store's log.
var quiet = slog.New(slog.DiscardHandler)

// env is a store in a temp directory (real SQLite, real blob directory)
// with direct access to its drivers, to list what is stored.
type env struct {
	t     testing.TB
	dir   string
	meta  *sqlitemeta.Store
	blobs *fileblob.Store
	s     *forkspace.Store
}

func openEnv(t testing.TB, dir string) *env {
	t.Helper()
	ctx := context.Background()
	m, err := sqlitemeta.Open(ctx, filepath.Join(dir, "meta.db"), sqlitemeta.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	b, err := fileblob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := forkspace.Open(ctx, forkspace.Options{Dir: dir, Meta: m, Blobs: b, InlineMax: inlineMax, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: dir, meta: m, blobs: b, s: s}
	t.Cleanup(func() { e.s.Close() })
	return e
}

// kvOf returns a tree reader over e's metadata.
func kvOf(e *env) *kv.Store { return kv.New(e.meta, kv.Options{}) }

// settle waits until the store has folded every checkpoint's staging
// delta (it does so in the background, and a fork's base waits for the
// next pass: folding it now), so that no fold changes what is reachable
// while the test compares.
func (e *env) settle(t fataler) {
	for {
		if err := e.s.FoldCheckpoints(context.Background()); err != nil {
			t.Fatalf("fold checkpoints: %v", err)
		}
		var ids []string
		err := e.meta.View(context.Background(), func(tx meta.Tx) (err error) {
			ids, err = tx.UnfoldedCheckpoints()
			return err
		})
		if err != nil {
			t.Fatalf("list unfolded checkpoints: %v", err)
		}
		if len(ids) == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// hashSet is a set of hashes.
type hashSet map[cas.Hash]bool

func (h hashSet) minus(o hashSet) hashSet {
	out := hashSet{}
	for k := range h {
		if !o[k] {
			out[k] = true
		}
	}
	return out
}

func (h hashSet) union(o hashSet) hashSet {
	out := maps.Clone(h)
	maps.Copy(out, o)
	return out
}

func (h hashSet) String() string {
	var s []string
	for k := range h {
		s = append(s, k.Short())
	}
	sort.Strings(s)
	return "{" + joinStrings(s) + "}"
}

func joinStrings(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// stored lists the stored blobs, inline bodies and nodes.
func (e *env) stored() (blobs, bodies, nodes hashSet) {
	e.t.Helper()
	ctx := context.Background()
	blobs, bodies, nodes = hashSet{}, hashSet{}, hashSet{}
	err := e.blobs.List(ctx, func(bi blob.Info) error { blobs[bi.ID] = true; return nil })
	if err != nil {
		e.t.Fatal(err)
	}
	err = e.meta.View(ctx, func(tx meta.Tx) error {
		if err := tx.InlineBodies(func(oi meta.ObjectInfo) error { bodies[oi.Hash] = true; return nil }); err != nil {
			return err
		}
		return tx.Nodes(func(oi meta.ObjectInfo) error { nodes[oi.Hash] = true; return nil })
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return blobs, bodies, nodes
}

// stateRoots lists the roots of every workspace's kept recorded states.
func (e *env) stateRoots() []cas.Hash {
	e.t.Helper()
	var roots []cas.Hash
	err := e.meta.View(context.Background(), func(tx meta.Tx) error {
		ws, err := tx.Workspaces()
		for _, w := range ws {
			var r []cas.Hash
			if r, _, err = tx.HistoryRefs(w.ID); err != nil {
				return err
			}
			roots = append(roots, r...)
		}
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return roots
}

// stateTrees returns the bodies and chunks the trees of the kept recorded
// states' roots reference.
func (e *env) stateTrees() (bodies, chunks hashSet) {
	e.t.Helper()
	bodies, chunks = hashSet{}, hashSet{}
	k := kvOf(e)
	for _, r := range e.stateRoots() {
		err := k.Walk(context.Background(), r, kv.WalkFuncs{Leaf: func(key, value []byte) error {
			man, ok, err := vfs.ContentRefs(key, value)
			if err != nil || !ok {
				return err
			}
			for _, x := range man.Extents {
				switch {
				case x.Hash.IsZero():
				case man.Inline:
					bodies[x.Hash] = true
				default:
					chunks[x.Hash] = true
				}
			}
			return nil
		}})
		if err != nil {
			e.t.Fatal(err)
		}
	}
	return bodies, chunks
}

// reachableNodes walks every head, checkpoint and kept state root (without skipping
// shared subtrees: an independent count of what GC must keep).
func (e *env) reachableNodes() hashSet {
	e.t.Helper()
	ctx := context.Background()
	roots := e.stateRoots()
	err := e.meta.View(ctx, func(tx meta.Tx) error {
		ws, err := tx.Workspaces()
		if err != nil {
			return err
		}
		for _, w := range ws {
			roots = append(roots, w.Root)
			cps, err := tx.Checkpoints(w.ID)
			if err != nil {
				return err
			}
			for _, c := range cps {
				roots = append(roots, c.Root)
			}
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	k := kv.New(e.meta, kv.Options{})
	out := hashSet{}
	for _, r := range roots {
		if err := k.Walk(ctx, r, kv.WalkFuncs{Node: func(h cas.Hash, _ int) error { out[h] = true; return nil }}); err != nil {
			e.t.Fatal(err)
		}
	}
	return out
}

// contentHashes returns what storing data creates: one inline body, or
// the chunks that chunking data gives (computed here, independently of
// package content).
func contentHashes(data []byte) (bodies, chunks hashSet) {
	bodies, chunks = hashSet{}, hashSet{}
	switch {
	case len(data) == 0:
	case len(data) <= inlineMax:
		bodies[cas.Sum(data)] = true
	default:
		p := chunk.DefaultParams
		for rest := data; len(rest) > 0; {
			n, ok := p.Next(rest, true)
			if !ok {
				panic("chunker wants more input at EOF")
			}
			chunks[cas.Sum(rest[:n])] = true
			rest = rest[n:]
		}
	}
	return bodies, chunks
}

// files is a model of a workspace: path → contents.
type files map[string][]byte

// content of the written files.
func (f files) hashes() (bodies, chunks hashSet) {
	bodies, chunks = hashSet{}, hashSet{}
	for _, data := range f {
		b, c := contentHashes(data)
		maps.Copy(bodies, b)
		maps.Copy(chunks, c)
	}
	return bodies, chunks
}

// readable is a workspace state that reads files.
type readable interface {
	ReadFile(ctx context.Context, name string) ([]byte, error)
	ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error)
}

// fataler is what checkFiles needs of a *testing.T or *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkFiles fails unless st holds exactly want (files in the root
// directory).
func checkFiles(t fataler, what string, st readable, want files) {
	t.Helper()
	ctx := context.Background()
	ents, err := st.ReadDir(ctx, ".")
	if err != nil {
		t.Fatalf("%s: read dir: %v", what, err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, slices.Sorted(maps.Keys(want))) {
		t.Fatalf("%s: files %v, want %v", what, got, slices.Sorted(maps.Keys(want)))
	}
	for name, data := range want {
		b, err := st.ReadFile(ctx, name)
		if err != nil {
			t.Fatalf("%s: read %s: %v", what, name, err)
		}
		if string(b) != string(data) {
			t.Fatalf("%s: %s has %d bytes that differ from the %d written", what, name, len(b), len(data))
		}
	}
}

// isNotExist reports whether err is fs.ErrNotExist.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
