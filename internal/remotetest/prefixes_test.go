package remotetest_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/internal/s3test"
)

// TestPrefixesIsolateStores keeps three stores in one bucket, under the
// prefixes "ns", "ns/inner" and "ns2" (each a string prefix of another's
// keys), writing the same bytes and bytes of their own. Deleting every
// workspace of "ns" and collecting with no grace empties "ns"'s blobs and
// leaves every object of the other two as it was, and they still read
// their files and check clean; then the same for "ns/inner".
func TestPrefixesIsolateStores(t *testing.T) {
	ctx := context.Background()
	v := s3test.StartVersity(t, "shared")
	prefixes := []string{"ns", "ns/inner", "ns2"}
	stores := map[string]*forkspace.Store{}
	shared := random(1, 50<<10)
	for i, p := range prefixes {
		st := bucketStore(t, v, "shared", p)
		stores[p] = st
		w, err := st.Create(ctx, "w", forkspace.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string][]byte{"shared.bin": shared, "own.bin": random(uint64(10+i), 30<<10)} {
			if err := w.WriteFile(ctx, name, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	all := keys(t, v, "shared", "")
	own := func(p string) []string {
		return slices.DeleteFunc(slices.Clone(all), func(k string) bool { return !hasBlobPrefix(k, p) })
	}
	for _, p := range prefixes {
		if n := len(own(p)); n != 2 {
			t.Fatalf("store %s has %d objects, want 2 (its shared and own blobs)", p, n)
		}
	}
	gone := map[string]bool{}
	for _, victim := range []string{"ns", "ns/inner"} {
		gone[victim] = true
		st := stores[victim]
		if err := st.Delete(ctx, "w"); err != nil {
			t.Fatal(err)
		}
		r, err := st.GC(ctx, forkspace.GCOptions{Grace: gc.NoGrace})
		if err != nil {
			t.Fatal(err)
		}
		if r.Reclaimed.Blobs != 2 {
			t.Errorf("gc of %s reclaimed %d blobs, want its 2", victim, r.Reclaimed.Blobs)
		}
		left := keys(t, v, "shared", "")
		if want := minus(all, own(victim)); !slices.Equal(left, want) {
			t.Fatalf("after gc of %s the bucket holds %v, want %v", victim, left, want)
		}
		all = left
		for _, p := range prefixes {
			if gone[p] {
				continue
			}
			w, err := stores[p].Workspace(ctx, "w")
			if err != nil {
				t.Fatal(err)
			}
			if got, err := w.ReadFile(ctx, "shared.bin"); err != nil || string(got) != string(shared) {
				t.Errorf("store %s after gc of %s: shared.bin %d bytes, %v", p, victim, len(got), err)
			}
			if c, err := stores[p].Check(ctx); err != nil || !c.Clean() {
				t.Errorf("fsck of %s after gc of %s: %v %+v", p, victim, err, c)
			}
		}
	}
}

// hasBlobPrefix reports whether key is a blob of the store at prefix.
func hasBlobPrefix(key, prefix string) bool {
	rest, ok := strings.CutPrefix(key, prefix+"/blobs/")
	return ok && len(rest) == 64
}
