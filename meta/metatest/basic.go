package metatest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

func testSettings(t *testing.T, s meta.Store) {
	view(t, s, func(tx meta.Tx) error {
		_, err := tx.Setting("format")
		wantErr(t, "unset setting", err, fs.ErrNotExist)
		return nil
	})
	steps := []struct{ key, value string }{
		{"format", "1"},
		{"chunker", "fastcdc 64K/1M/4M"},
		{"format", "2"}, // replaces
		{"empty", ""},
		{"ünïcode ☃", "välue\x00with nul"},
	}
	want := map[string]string{}
	for _, st := range steps {
		update(t, s, func(tx meta.Tx) error { return tx.SetSetting(st.key, st.value) })
		want[st.key] = st.value
	}
	view(t, s, func(tx meta.Tx) error {
		for k, v := range want {
			got, err := tx.Setting(k)
			if err != nil || got != v {
				t.Errorf("Setting(%q) = %q, %v; want %q", k, got, err, v)
			}
		}
		return nil
	})
}

func testCounters(t *testing.T, s meta.Store) {
	steps := []struct {
		name      string
		n         int64
		wantFirst int64
	}{
		{"inode", 1, 1},
		{"inode", 1, 2},
		{"inode", 10, 3},
		{"other", 5, 1}, // counters are independent
		{"inode", 1, 13},
		{"other", 1, 6},
	}
	for _, st := range steps {
		var first int64
		update(t, s, func(tx meta.Tx) (err error) {
			first, err = tx.Allocate(st.name, st.n)
			return err
		})
		if first != st.wantFirst {
			t.Errorf("Allocate(%q, %d) = %d, want %d", st.name, st.n, first, st.wantFirst)
		}
	}
	for _, n := range []int64{0, -1} {
		err := s.Update(context.Background(), func(tx meta.Tx) error {
			_, err := tx.Allocate("inode", n)
			return err
		})
		wantErr(t, "Allocate of a non-positive count", err, fs.ErrInvalid)
	}
	// Several allocations in one Update advance the counter in order.
	update(t, s, func(tx meta.Tx) error {
		for want := int64(14); want < 17; want++ {
			if got, err := tx.Allocate("inode", 1); err != nil || got != want {
				t.Errorf("Allocate in one tx = %d, %v; want %d", got, err, want)
			}
		}
		return nil
	})
}

// testCountersConcurrent allocates from many goroutines: the ranges must be
// disjoint and cover 1..total without holes.
func testCountersConcurrent(t *testing.T, s meta.Store) {
	const goroutines, per = 16, 25
	type span struct{ first, n int64 }
	var (
		mu    sync.Mutex
		spans []span
		wg    sync.WaitGroup
	)
	for g := range goroutines {
		wg.Go(func() {
			for i := range per {
				n := int64(1 + (g+i)%4)
				var first int64
				err := s.Update(context.Background(), func(tx meta.Tx) (err error) {
					first, err = tx.Allocate("inode", n)
					return err
				})
				if err != nil {
					t.Errorf("Allocate: %v", err)
					return
				}
				mu.Lock()
				spans = append(spans, span{first, n})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	sort.Slice(spans, func(i, j int) bool { return spans[i].first < spans[j].first })
	next := int64(1)
	for _, sp := range spans {
		if sp.first != next {
			t.Fatalf("allocation at %d, want %d: ranges overlap or leave a hole", sp.first, next)
		}
		next += sp.n
	}
}

// testGetInlines reads inline bodies in batches: more than one query's
// worth, with absent hashes, repeats and a node's hash among them.
func testGetInlines(t *testing.T, s meta.Store) {
	ctx := context.Background()
	var objs []meta.Object
	for i := range 300 { // several batches in every driver
		data := fmt.Appendf(nil, "body %d", i)
		if i%7 == 0 {
			data = bytes.Repeat(data, 2000) // large bodies among small ones
		}
		objs = append(objs, meta.Object{Hash: hashOf(string(data)), Data: data})
	}
	node := hashOf("a node, not a body")
	update(t, s, func(tx meta.Tx) error {
		if err := tx.PutNodes([]meta.Object{{Hash: node, Data: []byte("n")}}); err != nil {
			return err
		}
		return tx.PutInline(objs)
	})
	want := map[cas.Hash][]byte{}
	var ask []cas.Hash
	for i, o := range objs {
		want[o.Hash] = o.Data
		ask = append(ask, o.Hash)
		if i%10 == 0 {
			ask = append(ask, hashOf(fmt.Sprint("absent ", i)), o.Hash) // an absent body and a repeat
		}
	}
	ask = append(ask, node)
	got := map[cas.Hash][]byte{}
	err := s.GetInlines(ctx, ask, func(h cas.Hash, data []byte) error {
		if _, ok := got[h]; ok {
			t.Errorf("body %s reported twice", h.Short())
		}
		got[h] = data
		return nil
	})
	if err != nil {
		t.Fatalf("GetInlines: %v", err)
	}
	if len(got) != len(want) {
		t.Errorf("GetInlines reported %d bodies, want %d", len(got), len(want))
	}
	for h, data := range want {
		if !bytes.Equal(got[h], data) {
			t.Fatalf("body %s = %d bytes, want %d", h.Short(), len(got[h]), len(data))
		}
		got[h][0] ^= 0xff // fn owns the slice
	}
	if again, err := s.GetInline(ctx, objs[0].Hash); err != nil || !bytes.Equal(again, objs[0].Data) {
		t.Fatalf("after changing a reported slice: %q, %v", again, err)
	}

	if err := s.GetInlines(ctx, nil, func(cas.Hash, []byte) error { t.Error("fn called for no hashes"); return nil }); err != nil {
		t.Fatalf("GetInlines of none: %v", err)
	}
	stop := errors.New("stop")
	calls := 0
	err = s.GetInlines(ctx, ask, func(cas.Hash, []byte) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("GetInlines whose fn fails: %v after %d calls, want %v after 1", err, calls, stop)
	}

	// A driver that keeps checksums reports the same bodies, each checked,
	// also after a second put of them.
	c, ok := s.(meta.CheckedInlines)
	if !ok {
		return
	}
	update(t, s, func(tx meta.Tx) error { return tx.PutInline(objs[:10]) })
	checked := map[cas.Hash]bool{}
	err = c.GetCheckedInlines(ctx, ask, func(h cas.Hash, data []byte, ok bool) error {
		if _, seen := checked[h]; seen {
			t.Errorf("checked body %s reported twice", h.Short())
		}
		checked[h] = ok
		if !bytes.Equal(data, want[h]) {
			t.Errorf("checked body %s = %d bytes, want %d", h.Short(), len(data), len(want[h]))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("GetCheckedInlines: %v", err)
	}
	if len(checked) != len(want) {
		t.Errorf("GetCheckedInlines reported %d bodies, want %d", len(checked), len(want))
	}
	for h, ok := range checked {
		if !ok {
			t.Fatalf("body %s, stored with its checksum, reported unchecked", h.Short())
		}
	}
}

func testObjects(t *testing.T, s meta.Store) {
	kinds := []struct {
		name string
		put  func(meta.Tx, []meta.Object) error
		get  func(context.Context, [32]byte) ([]byte, error)
	}{
		{"nodes", meta.Tx.PutNodes, func(ctx context.Context, h [32]byte) ([]byte, error) { return s.GetNode(ctx, h) }},
		{"inline", meta.Tx.PutInline, func(ctx context.Context, h [32]byte) ([]byte, error) { return s.GetInline(ctx, h) }},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			ctx := context.Background()
			objs := []meta.Object{
				{Hash: hashOf(k.name + "a"), Data: []byte(k.name + " a")},
				{Hash: hashOf(k.name + "b"), Data: bytes.Repeat([]byte{0, 1, 2, 0xff}, 5000)},
			}
			for i := range 150 { // enough for a driver to split into several statements
				data := fmt.Appendf(nil, "%s %d", k.name, i)
				objs = append(objs, meta.Object{Hash: hashOf(string(data)), Data: data})
			}
			if _, err := k.get(ctx, objs[0].Hash); err == nil {
				t.Fatal("get before put succeeded")
			} else {
				wantErr(t, "get before put", err, fs.ErrNotExist)
			}
			update(t, s, func(tx meta.Tx) error { return k.put(tx, objs) })
			// Idempotent: the same objects again, and duplicates in one call.
			update(t, s, func(tx meta.Tx) error { return k.put(tx, append(objs, objs...)) })
			update(t, s, func(tx meta.Tx) error { return k.put(tx, nil) })
			// One new object twice in one small call (a group commit of
			// two mutations writing the same body).
			twice := meta.Object{Hash: hashOf(k.name + " twice"), Data: []byte("twice")}
			update(t, s, func(tx meta.Tx) error { return k.put(tx, []meta.Object{twice, objs[0], twice, objs[1]}) })
			objs = append(objs, twice)
			for _, o := range objs {
				got, err := k.get(ctx, o.Hash)
				if err != nil || !bytes.Equal(got, o.Data) {
					t.Fatalf("get %s = %d bytes, %v; want %d bytes", o.Hash.Short(), len(got), err, len(o.Data))
				}
				got[0] ^= 0xff // the caller owns the returned slice
				if again, _ := k.get(ctx, o.Hash); !bytes.Equal(again, o.Data) {
					t.Fatal("changing a returned slice changed the stored object")
				}
			}
			_, err := k.get(ctx, hashOf("missing"))
			wantErr(t, "get missing", err, fs.ErrNotExist)
		})
	}
	// Nodes and inline bodies are separate namespaces.
	update(t, s, func(tx meta.Tx) error {
		return tx.PutNodes([]meta.Object{{Hash: hashOf("only a node"), Data: []byte("n")}})
	})
	_, err := s.GetInline(context.Background(), hashOf("only a node"))
	wantErr(t, "GetInline of a node", err, fs.ErrNotExist)
}
