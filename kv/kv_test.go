package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/forkspace/forkspace/cas"
	"pgregory.net/rapid"
)

// memNodes is a NodeSource over a map; tests persist Apply's nodes into it.
type memNodes struct {
	mu sync.Mutex
	m  map[cas.Hash][]byte
}

func newMemNodes() *memNodes { return &memNodes{m: make(map[cas.Hash][]byte)} }

func (s *memNodes) GetNode(_ context.Context, h cas.Hash) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[h]
	if !ok {
		return nil, fmt.Errorf("node %s: %w", h.Short(), fs.ErrNotExist)
	}
	return b, nil
}

func (s *memNodes) put(nodes []Node) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range nodes {
		s.m[n.Hash] = n.Data
	}
}

// tb is what the helpers need of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

// apply runs Store.Apply and persists the new nodes.
func apply(t tb, s *Store, src *memNodes, root cas.Hash, muts []Mutation) cas.Hash {
	t.Helper()
	r, nodes, err := s.Apply(context.Background(), root, muts)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	src.put(nodes)
	return r
}

// newStore returns a Store with a tiny cache so that tests exercise loads.
func newStore(seed uint64) (*Store, *memNodes) {
	src := newMemNodes()
	return New(src, Options{Seed: seed, CacheBytes: 64 << 10}), src
}

func scanAll(t tb, s *Store, root cas.Hash) map[string]string {
	t.Helper()
	got := map[string]string{}
	var prev []byte
	err := s.Scan(context.Background(), root, nil, nil, func(k, v []byte) error {
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			t.Fatalf("scan out of order: %q then %q", prev, k)
		}
		prev = slices.Clone(k)
		got[string(k)] = string(v)
		return nil
	})
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	return got
}

// numberedKeys returns n keys "key-00000000"… with their numbers as
// values.
func numberedKeys(n int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		m[fmt.Sprintf("key-%08d", i)] = fmt.Sprint(i)
	}
	return m
}

func build(t tb, s *Store, src *memNodes, m map[string]string) cas.Hash {
	var muts []Mutation
	for k, v := range m {
		muts = append(muts, Mutation{Key: []byte(k), Value: []byte(v)})
	}
	return apply(t, s, src, cas.Hash{}, muts)
}

func TestEmptyTree(t *testing.T) {
	s, src := newStore(1)
	ctx := context.Background()
	if _, ok, err := s.Get(ctx, cas.Hash{}, []byte("a")); ok || err != nil {
		t.Fatalf("get on empty tree: ok=%v err=%v", ok, err)
	}
	r := apply(t, s, src, cas.Hash{}, []Mutation{{Key: []byte("a"), Value: []byte("1")}})
	r = apply(t, s, src, r, []Mutation{{Key: []byte("a"), Delete: true}})
	if !r.IsZero() {
		t.Fatalf("deleting every key left root %s", r)
	}
}

func TestApplyRejectsBadKeys(t *testing.T) {
	s, _ := newStore(1)
	for _, m := range []Mutation{{Key: nil}, {Key: make([]byte, maxKeyLen+1)}, {Key: []byte("k"), Value: make([]byte, maxValueLen+1)}} {
		if _, _, err := s.Apply(context.Background(), cas.Hash{}, []Mutation{m}); err == nil {
			t.Errorf("apply accepted key of %d bytes, value of %d", len(m.Key), len(m.Value))
		}
	}
}

func TestLargeTreeShape(t *testing.T) {
	s, src := newStore(7)
	m := numberedKeys(20000)
	root := build(t, s, src, m)
	n, err := s.load(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if n.level < 2 {
		t.Fatalf("20k keys built a tree of height %d", n.level+1)
	}
	if got := scanAll(t, s, root); !maps.Equal(got, m) {
		t.Fatalf("scan returned %d keys, want %d", len(got), len(m))
	}
	// One change rewrites one path, not the tree.
	changed, nodes, err := s.Apply(context.Background(), root, []Mutation{{Key: []byte("key-00010000"), Value: []byte("x")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) > 2*(n.level+1) {
		t.Fatalf("one mutation created %d nodes for a tree of height %d", len(nodes), n.level+1)
	}
	// Diffing the two reads the changed path of each, not the other
	// leaves under the changed nodes (it read all the changed level-1
	// node's leaves, ~32 a side).
	src.put(nodes)
	counted := &countingNodes{memNodes: src}
	cold := New(counted, Options{Seed: 7, CacheBytes: 1})
	var changes int
	err = cold.Diff(context.Background(), root, changed, func(Change) error { changes++; return nil })
	if err != nil || changes != 1 {
		t.Fatalf("diff: %d changes, %v", changes, err)
	}
	if got := counted.n.Load(); got > int64(2*(n.level+1)+4) {
		t.Fatalf("diffing one change read %d nodes of trees of height %d", got, n.level+1)
	}
	// Through a BatchSource the same diff asks once per level and side
	// at most, and reads no more nodes.
	batched := &batchedNodes{memNodes: src}
	cold = New(batched, Options{Seed: 7, CacheBytes: 1})
	changes = 0
	err = cold.Diff(context.Background(), root, changed, func(Change) error { changes++; return nil })
	if err != nil || changes != 1 {
		t.Fatalf("batched diff: %d changes, %v", changes, err)
	}
	if got, asked := batched.nodes.Load(), batched.requests.Load(); got > counted.n.Load() || asked > int64(2*(n.level+1)+4) {
		t.Fatalf("batched diff read %d nodes in %d requests (%d one by one)", got, asked, counted.n.Load())
	}
}

// countingNodes counts the nodes read from a memNodes.
type countingNodes struct {
	*memNodes
	n atomic.Int64
}

func (c *countingNodes) GetNode(ctx context.Context, h cas.Hash) ([]byte, error) {
	c.n.Add(1)
	return c.memNodes.GetNode(ctx, h)
}

// batchedNodes is a memNodes that is also a BatchSource, counting
// requests (GetNode's too) and the nodes they read.
type batchedNodes struct {
	*memNodes
	requests, nodes atomic.Int64
}

func (b *batchedNodes) GetNode(ctx context.Context, h cas.Hash) ([]byte, error) {
	b.requests.Add(1)
	b.nodes.Add(1)
	return b.memNodes.GetNode(ctx, h)
}

func (b *batchedNodes) GetNodes(ctx context.Context, hs []cas.Hash, fn func(cas.Hash, []byte) error) error {
	b.requests.Add(1)
	seen := map[cas.Hash]bool{}
	for _, h := range hs {
		if seen[h] {
			continue
		}
		seen[h] = true
		data, err := b.memNodes.GetNode(ctx, h)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		b.nodes.Add(1)
		if err := fn(h, data); err != nil {
			return err
		}
	}
	return nil
}

// TestWalk walks a tree through a plain and a batched source: every node
// once, every entry once, a level's siblings read together; a missing
// node goes to Failed and its subtree is skipped.
func TestWalk(t *testing.T) {
	ctx := context.Background()
	s, src := newStore(5)
	m := numberedKeys(20000)
	root := build(t, s, src, m)
	plain := New(src, Options{Seed: 5})
	batched := &batchedNodes{memNodes: src}
	for name, st := range map[string]*Store{"plain": plain, "batched": New(batched, Options{Seed: 5})} {
		seen := map[cas.Hash]bool{}
		got := map[string]string{}
		err := st.Walk(ctx, root, WalkFuncs{
			Node: func(h cas.Hash, size int) error {
				if seen[h] || size != len(src.m[h]) {
					t.Fatalf("%s: node %s seen twice or of size %d", name, h.Short(), size)
				}
				seen[h] = true
				return nil
			},
			Leaf: func(k, v []byte) error { got[string(k)] = string(v); return nil },
		})
		if err != nil || !maps.Equal(got, m) || len(seen) != len(src.m) {
			t.Fatalf("%s: walk saw %d entries of %d and %d nodes of %d: %v", name, len(got), len(m), len(seen), len(src.m), err)
		}
	}
	if r, n := batched.requests.Load(), batched.nodes.Load(); n != int64(len(src.m)) || r > n/batchNodes+8 {
		t.Fatalf("batched walk read %d nodes in %d requests", n, r)
	}

	// A missing leaf: Failed hears of it once, the rest is walked.
	n, err := s.load(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	for n.level > 1 {
		if n, err = s.load(ctx, n.kids[0]); err != nil {
			t.Fatal(err)
		}
	}
	gone := n.kids[0]
	delete(src.m, gone)
	for _, st := range []*Store{New(src, Options{Seed: 5}), New(&batchedNodes{memNodes: src}, Options{Seed: 5})} {
		var failed []cas.Hash
		entries := 0
		err := st.Walk(ctx, root, WalkFuncs{
			Leaf:   func(k, v []byte) error { entries++; return nil },
			Failed: func(h cas.Hash, err error) error { failed = append(failed, h); return nil },
		})
		if err != nil || len(failed) != 1 || failed[0] != gone || entries == 0 || entries >= len(m) {
			t.Fatalf("walk with a missing leaf: failed %v, %d entries, %v", failed, entries, err)
		}
		if err := st.Walk(ctx, root, WalkFuncs{}); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("walk without Failed over a missing leaf: %v", err)
		}
	}
}

// TestWalkStops: an error from a callback, or a cancelled context, ends
// a walk at once, while the next batch of the level is being read: Walk
// returns it, and no callback runs after.
func TestWalkStops(t *testing.T) {
	s, src := newStore(5)
	m := numberedKeys(20000)
	root := build(t, s, src, m)
	st := New(&batchedNodes{memNodes: src}, Options{Seed: 5})
	stop := errors.New("stop")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range []struct {
		name string
		want error
		end  func() error
	}{
		{"callback error", stop, func() error { return stop }},
		{"cancel", context.Canceled, func() error { cancel(); return nil }},
	} {
		entries, after := 0, 0
		var last string
		err := st.Walk(ctx, root, WalkFuncs{Leaf: func(k, _ []byte) error {
			if string(k) <= last {
				t.Fatalf("%s: key %q after %q", c.name, k, last)
			}
			last = string(k)
			if entries++; entries > 3*len(m)/4 {
				after++
			}
			if entries == len(m)/2 {
				return c.end()
			}
			return nil
		}})
		if !errors.Is(err, c.want) || entries < len(m)/2 || after > 0 {
			t.Fatalf("%s: %v after %d entries of %d, %d late", c.name, err, entries, len(m), after)
		}
	}
}

func TestScanBoundsAndStop(t *testing.T) {
	s, src := newStore(3)
	m := map[string]string{}
	for i := range 1000 {
		m[fmt.Sprintf("k%04d", i)] = "v"
	}
	root := build(t, s, src, m)
	var keys []string
	err := s.Scan(context.Background(), root, []byte("k0100"), []byte("k0200"), func(k, _ []byte) error {
		keys = append(keys, string(k))
		return nil
	})
	if err != nil || len(keys) != 100 || keys[0] != "k0100" || keys[99] != "k0199" {
		t.Fatalf("range scan: err=%v n=%d", err, len(keys))
	}
	n := 0
	err = s.Scan(context.Background(), root, nil, nil, func(k, _ []byte) error {
		n++
		if n == 10 {
			return Stop
		}
		return nil
	})
	if err != nil || n != 10 {
		t.Fatalf("stop: err=%v n=%d", err, n)
	}
}

func TestCorruptNode(t *testing.T) {
	s, src := newStore(3)
	root := build(t, s, src, map[string]string{"a": "1", "b": "2"})
	src.m[root][len(src.m[root])-1] ^= 0xff
	fresh := New(src, Options{Seed: 3})
	if _, _, err := fresh.Get(context.Background(), root, []byte("a")); err == nil {
		t.Fatal("read of a corrupt node succeeded")
	}
}

// TestModel drives random batches of puts and deletes, forks (reusing old
// roots), diffs of trees and of unfolded views (View.Diff), and overlays
// against a plain map, and checks history independence: every incremental
// root equals the root built from scratch.
func TestModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		s, src := newStore(seed)
		if rapid.Bool().Draw(t, "batched") {
			// Reads go through GetNodes, and a cache small enough to
			// miss mixes cached nodes with read ones in one loadMany.
			s = New(&batchedNodes{memNodes: src}, Options{Seed: seed, CacheBytes: int64(rapid.IntRange(1, 8<<10).Draw(t, "cache"))})
		}
		ctx := context.Background()
		keyGen := rapid.StringMatching(`[a-d]{1,3}[0-9]{0,3}`)
		type version struct {
			root  cas.Hash
			model map[string]string
		}
		versions := []version{{model: map[string]string{}}}
		steps := rapid.IntRange(1, 40).Draw(t, "steps")
		for step := range steps {
			base := versions[rapid.IntRange(0, len(versions)-1).Draw(t, "base")]
			model := maps.Clone(base.model)
			var muts []Mutation
			for range rapid.IntRange(0, 60).Draw(t, "batch") {
				k := keyGen.Draw(t, "key")
				if rapid.Bool().Draw(t, "delete") {
					muts = append(muts, Mutation{Key: []byte(k), Delete: true})
					delete(model, k)
				} else {
					v := rapid.StringN(0, 20, -1).Draw(t, "value")
					muts = append(muts, Mutation{Key: []byte(k), Value: []byte(v)})
					model[k] = v
				}
			}
			root := apply(t, s, src, base.root, muts)
			if got := scanAll(t, s, root); !maps.Equal(got, model) {
				t.Fatalf("step %d: tree holds %v, model %v", step, got, model)
			}
			if scratch := build(t, s, src, model); scratch != root {
				t.Fatalf("step %d: incremental root %s != scratch root %s", step, root.Short(), scratch.Short())
			}
			for k, v := range model {
				got, ok, err := s.Get(ctx, root, []byte(k))
				if err != nil || !ok || string(got) != v {
					t.Fatalf("get %q: %q %v %v, want %q", k, got, ok, err, v)
				}
			}
			if _, ok, _ := s.Get(ctx, root, []byte("zzzz")); ok {
				t.Fatal("get of an absent key succeeded")
			}
			d, to := treeDiff(s, base.root, root)
			checkDiff(t, d, to, base.model, model)
			versions = append(versions, version{root, model})
		}
		a := versions[rapid.IntRange(0, len(versions)-1).Draw(t, "a")]
		b := versions[rapid.IntRange(0, len(versions)-1).Draw(t, "b")]
		d, to := treeDiff(s, a.root, b.root)
		checkDiff(t, d, to, a.model, b.model)
		checkOverlay(t, s, a.root, a.model, keyGen)
		va, ma := stage(t, s, a.root, a.model, keyGen, "a")
		vb, mb := stage(t, s, b.root, b.model, keyGen, "b")
		checkDiff(t, va.Diff, vb, ma, mb)
	})
}

// diffFunc is a diff of two states (Store.Diff or View.Diff).
type diffFunc func(ctx context.Context, to View, fn func(Change) error) error

// treeDiff is Store.Diff of a and b as a diffFunc (its View is unused).
func treeDiff(s *Store, a, b cas.Hash) (diffFunc, View) {
	return func(ctx context.Context, _ View, fn func(Change) error) error { return s.Diff(ctx, a, b, fn) }, View{}
}

// stage returns a view of root with random mutations staged over it, and
// the model of that view.
func stage(t *rapid.T, s *Store, root cas.Hash, base map[string]string, keyGen *rapid.Generator[string], label string) (View, map[string]string) {
	model := maps.Clone(base)
	o := NewOverlay()
	for seq := range rapid.IntRange(0, 30).Draw(t, label+" staged") {
		k := keyGen.Draw(t, label+" key")
		if rapid.Bool().Draw(t, label+" delete") {
			o.Delete([]byte(k), int64(seq+1))
			delete(model, k)
		} else {
			v := rapid.StringN(0, 5, -1).Draw(t, label+" value")
			o.Set([]byte(k), []byte(v), int64(seq+1))
			model[k] = v
		}
	}
	if o.Len() == 0 && rapid.Bool().Draw(t, label+" no overlay") {
		o = nil
	}
	return View{Store: s, Root: root, Overlay: o}, model
}

// checkDiff compares diff(to) with the difference of the models ma → mb.
func checkDiff(t *rapid.T, diff diffFunc, to View, ma, mb map[string]string) {
	want := map[string][2]*string{}
	for k, v := range ma {
		if w, ok := mb[k]; !ok || w != v {
			v := v
			want[k] = [2]*string{&v, nil}
		}
	}
	for k, v := range mb {
		if old, ok := ma[k]; !ok || old != v {
			e := want[k]
			v := v
			e[1] = &v
			want[k] = e
		}
	}
	got := map[string][2]*string{}
	var prev string
	err := diff(context.Background(), to, func(c Change) error {
		if prev != "" && string(c.Key) <= prev {
			t.Fatalf("diff out of order")
		}
		prev = string(c.Key)
		var e [2]*string
		if c.Old != nil {
			o := string(c.Old)
			e[0] = &o
		}
		if c.New != nil {
			n := string(c.New)
			e[1] = &n
		}
		got[string(c.Key)] = e
		return nil
	})
	if err != nil {
		t.Fatalf("diff: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("diff found %d changes, want %d", len(got), len(want))
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || !eqPtr(g[0], w[0]) || !eqPtr(g[1], w[1]) {
			t.Fatalf("diff of %q wrong", k)
		}
	}
}

func eqPtr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// checkOverlay stages random mutations over root and compares the merged
// view with the model, then folds the overlay and compares again.
func checkOverlay(t *rapid.T, s *Store, root cas.Hash, base map[string]string, keyGen *rapid.Generator[string]) {
	ctx := context.Background()
	model := maps.Clone(base)
	o := NewOverlay()
	for seq := range rapid.IntRange(0, 50).Draw(t, "staged") {
		k := keyGen.Draw(t, "skey")
		if rapid.Bool().Draw(t, "sdelete") {
			o.Delete([]byte(k), int64(seq+1))
			delete(model, k)
		} else {
			v := rapid.StringN(0, 5, -1).Draw(t, "svalue")
			o.Set([]byte(k), []byte(v), int64(seq+1))
			model[k] = v
		}
	}
	v := View{Store: s, Root: root, Overlay: o}
	got := map[string]string{}
	var prev string
	if err := v.Scan(ctx, nil, nil, func(k, val []byte) error {
		if prev != "" && string(k) <= prev {
			t.Fatalf("view scan out of order: %q after %q", k, prev)
		}
		prev = string(k)
		got[string(k)] = string(val)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, model) {
		t.Fatalf("view holds %v, model %v", got, model)
	}
	for k, want := range model {
		if val, ok, err := v.Get(ctx, []byte(k)); err != nil || !ok || string(val) != want {
			t.Fatalf("view get %q", k)
		}
	}
	muts, max := o.Mutations()
	folded, nodes, err := s.Apply(ctx, root, muts)
	if err != nil {
		t.Fatal(err)
	}
	src := s.src
	if b, ok := src.(*batchedNodes); ok {
		src = b.memNodes
	}
	src.(*memNodes).put(nodes)
	o.Drop(max)
	if o.Len() != 0 {
		t.Fatalf("drop left %d entries", o.Len())
	}
	got = map[string]string{}
	_ = s.Scan(ctx, folded, nil, nil, func(k, val []byte) error { got[string(k)] = string(val); return nil })
	if !maps.Equal(got, model) {
		t.Fatalf("folded tree differs from the view")
	}
}

func TestViewScanStop(t *testing.T) {
	s, src := newStore(5)
	root := build(t, s, src, map[string]string{"a": "1", "c": "3"})
	o := NewOverlay()
	o.Set([]byte("b"), []byte("2"), 1)
	o.Set([]byte("d"), []byte("4"), 2)
	var seen []string
	err := View{Store: s, Root: root, Overlay: o}.Scan(context.Background(), nil, nil, func(k, _ []byte) error {
		seen = append(seen, string(k))
		if string(k) == "b" {
			return Stop
		}
		return nil
	})
	if err != nil || !slices.Equal(seen, []string{"a", "b"}) {
		t.Fatalf("stopped scan saw %v err %v", seen, err)
	}
}

func TestOverlayDropKeepsRestaged(t *testing.T) {
	o := NewOverlay()
	o.Set([]byte("a"), []byte("1"), 1)
	o.Set([]byte("b"), []byte("1"), 2)
	_, max := o.Mutations()
	o.Set([]byte("a"), []byte("2"), 3) // restaged after the fold began
	o.Drop(max)
	if v, _, found := o.Lookup([]byte("a")); !found || string(v) != "2" {
		t.Fatal("drop removed a key restaged after the fold")
	}
	if _, _, found := o.Lookup([]byte("b")); found {
		t.Fatal("drop kept a folded key")
	}
}

func FuzzDecodeNode(f *testing.F) {
	s, src := newStore(9)
	m := map[string]string{}
	for i := range 300 {
		m[fmt.Sprintf("k%03d", i)] = fmt.Sprint(i)
	}
	root := build(f, s, src, m)
	for _, b := range src.m {
		f.Add(b)
	}
	_ = root
	f.Add([]byte{1, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := decodeNode(b)
		if err != nil {
			return
		}
		if !bytes.Equal(n.encode(), b) {
			t.Fatalf("decode/encode not canonical")
		}
	})
}
