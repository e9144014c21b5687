package fileblob_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/cas"
)

// TestListIDs: ListIDs names exactly the blobs List does, across many leaf
// directories read concurrently, skipping stray names; blobs deleted
// during a listing may be missed but nothing else is; an error from fn
// or a cancelled context stops it, and a closed store refuses it.
func TestListIDs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir)
	var _ blob.IDLister = s
	want := map[cas.Hash]bool{}
	for i := range 600 {
		data := fmt.Appendf(nil, "blob %d", i)
		id := cas.Sum(data)
		if err := s.Put(ctx, id, data); err != nil {
			t.Fatal(err)
		}
		want[id] = true
	}
	// Strays: a file in a shard, a misplaced blob name, a non-hex leaf.
	some := cas.Sum([]byte("blob 0")).String()
	for _, p := range []string{some[:2] + "/stray", "ff/00/" + some, "zz/yy/" + some} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ids := func() map[cas.Hash]bool {
		got := map[cas.Hash]bool{}
		if err := s.ListIDs(ctx, func(id cas.Hash) error {
			if got[id] {
				t.Fatalf("%s listed twice", id.Short())
			}
			got[id] = true
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	infos := map[cas.Hash]bool{}
	if err := s.List(ctx, func(bi blob.Info) error { infos[bi.ID] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if got := ids(); !maps.Equal(got, want) || !maps.Equal(infos, want) {
		t.Fatalf("ListIDs found %d blobs, List %d, want %d", len(got), len(infos), len(want))
	}

	// Deleting half during listings: whatever is listed was stored, and
	// what is not deleted is listed.
	var kept, doomed []cas.Hash
	for id := range want {
		if len(doomed) < len(want)/2 {
			doomed = append(doomed, id)
		} else {
			kept = append(kept, id)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, id := range doomed {
			if err := s.Delete(ctx, id); err != nil {
				t.Error(err)
			}
		}
	})
	for range 3 {
		got := ids()
		for id := range got {
			if !want[id] {
				t.Fatalf("listed %s, never stored", id.Short())
			}
		}
		for _, id := range kept {
			if !got[id] {
				t.Fatalf("a kept blob %s was not listed", id.Short())
			}
		}
	}
	wg.Wait()

	stop := errors.New("stop")
	n := 0
	if err := s.ListIDs(ctx, func(cas.Hash) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("ListIDs with a failing callback: %v after %d calls", err, n)
	}
	cctx, cancel := context.WithCancel(ctx)
	n = 0
	err := s.ListIDs(cctx, func(cas.Hash) error { n++; cancel(); return nil })
	if !errors.Is(err, context.Canceled) || n >= len(kept) {
		t.Fatalf("ListIDs cancelled: %v after %d calls", err, n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.ListIDs(ctx, func(cas.Hash) error { return nil }); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("ListIDs after Close: %v", err)
	}
}
