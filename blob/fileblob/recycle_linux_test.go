package fileblob_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/forkspace/forkspace/cas"
)

// TestDeleteRecyclesFiles: a deleted blob's file is emptied and kept in
// tmp, and the next put writes its blob into that file (the same inode)
// instead of creating one; the blob reads back whole, deferred or not,
// and nothing else is left in tmp.
func TestDeleteRecyclesFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir)
	ino := func(p string) uint64 {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	tmpFiles := func() []os.FileInfo {
		t.Helper()
		ents, err := os.ReadDir(filepath.Join(dir, "tmp"))
		if err != nil {
			t.Fatal(err)
		}
		var out []os.FileInfo
		for _, e := range ents {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fi)
		}
		return out
	}
	old := bytes.Repeat([]byte("old blob "), 1000)
	oldID := cas.Sum(old)
	if err := s.Put(ctx, oldID, old); err != nil {
		t.Fatal(err)
	}
	was := ino(s.Path(oldID))
	if err := s.Delete(ctx, oldID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(ctx, oldID); err == nil {
		t.Fatal("deleted blob still there")
	}
	if fis := tmpFiles(); len(fis) != 1 || fis[0].Size() != 0 {
		t.Fatalf("tmp after a delete: %d files, want one empty file", len(fis))
	}
	for i, deferred := range []bool{false, true} {
		data := bytes.Repeat([]byte{byte(i), 'n', 'e', 'w'}, 300)
		id := cas.Sum(data)
		put := s.Put
		if deferred {
			put = s.PutDeferred
		}
		if err := put(ctx, id, data); err != nil {
			t.Fatal(err)
		}
		if deferred {
			if err := s.Sync(ctx); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Get(ctx, id, 0, -1)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("recycled blob reads %d bytes (%v)", len(got), err)
		}
		if fis := tmpFiles(); len(fis) != 0 {
			t.Fatalf("tmp after a put: %d files", len(fis))
		}
		if now := ino(s.Path(id)); i == 0 && now != was {
			t.Fatalf("put created inode %d instead of reusing %d", now, was)
		}
		if err := s.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
}
