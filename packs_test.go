package forkspace_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/internal/s3test"
)

// TestPacksOnS3: a store on S3 packs small files (a few pack objects, no
// object per file), reads them back, survives a reopen, and collecting
// after deleting the workspaces leaves the bucket empty; a pack removed
// from the bucket makes reads of its files errdefs.ErrCorrupt and fsck
// names each blob it held and a file it breaks.
func TestPacksOnS3(t *testing.T) {
	v := s3test.StartVersity(t, "packs")
	dir := t.TempDir()
	ctx := context.Background()
	open := func() *forkspace.Store {
		b, err := versityBlobs(v.URL, "packs", "p")
		if err != nil {
			t.Fatal(err)
		}
		st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir, Blobs: b})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	w, err := st.Create(ctx, "a", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	file := func(i int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("file %d;", i)), 4000) } // 28–36 kB
	for i := range 50 {
		if err := w.WriteFile(ctx, fmt.Sprintf("f%02d", i), file(i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keys := v.Keys(t, "packs", "p/")
	for _, k := range keys {
		if !strings.HasPrefix(k, "p/packs/") {
			t.Fatalf("object %s beside the packs", k)
		}
	}
	if len(keys) == 0 || len(keys) > 50 {
		t.Fatalf("%d pack objects for 50 files written one by one", len(keys))
	}
	if _, err := w.Fork(ctx, "b", forkspace.ForkOptions{}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	st = open()
	defer st.Close()
	w, err = st.Workspace(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if got, err := w.ReadFile(ctx, fmt.Sprintf("f%02d", i)); err != nil || !bytes.Equal(got, file(i)) {
			t.Fatalf("read f%02d: %v", i, err)
		}
	}
	if r, err := st.Check(ctx); err != nil || !r.Clean() {
		t.Fatalf("fsck: %+v, %v", r, err)
	}

	// Remove a pack behind the store's back: fsck finds its blobs
	// missing although the disk cache holds them; without the cache,
	// reading its files is errdefs.ErrCorrupt.
	v.Remove(t, "packs", keys[0])
	r, err := st.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) == 0 {
		t.Fatal("fsck found nothing wrong with a pack missing")
	}
	for _, p := range r.Problems {
		if len(p.Files) == 0 || !strings.HasPrefix(p.Files[0], "a:/f") && !strings.HasPrefix(p.Files[0], "b:/f") {
			t.Fatalf("fsck does not name the file a blob of the missing pack breaks: %+v", p)
		}
	}
	st.Close()
	if err := os.RemoveAll(filepath.Join(dir, "blobcache")); err != nil {
		t.Fatal(err)
	}
	st = open()
	defer st.Close()
	w, _ = st.Workspace(ctx, "a")
	broken := 0
	for i := range 50 {
		_, err := w.ReadFile(ctx, fmt.Sprintf("f%02d", i))
		switch {
		case errors.Is(err, errdefs.ErrCorrupt):
			broken++
		case err != nil:
			t.Fatalf("read f%02d from a missing pack: %v, want errdefs.ErrCorrupt", i, err)
		}
	}
	if broken != len(r.Problems) {
		t.Fatalf("%d files unreadable, fsck found %d problems: %+v", broken, len(r.Problems), r.Problems)
	}

	// Deleting both workspaces and collecting empties the bucket.
	for _, name := range []string{"a", "b"} {
		if err := st.Delete(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	gr, err := st.GC(ctx, forkspace.GCOptions{Grace: gc.NoGrace})
	if err != nil {
		t.Fatal(err)
	}
	if gr.Packs == nil || gr.Packs.Done.DeletedPacks != len(keys) {
		t.Fatalf("gc packs: %+v", gr.Packs)
	}
	if left := v.Keys(t, "packs", "p/"); len(left) != 0 {
		t.Fatalf("%d objects left after collecting everything: %v", len(left), left)
	}
}
