package fusefs_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/fusefs"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// TestDeferredCreateAndAttrs tries to catch a file between its create and
// its close, when its creation and the attributes set on its descriptor
// wait for the close's transaction (vfs.WithDeferredCommit): every
// surface must see it, and after close all of it.
func TestDeferredCreateAndAttrs(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	w := create(t, st, "w", meta.Quota{})
	dir := mount(t, w.FS, fusefs.Options{})
	p := filepath.Join(dir, "f")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	ok(t, err)
	defer f.Close()
	// Created, not closed: the library, a listing and a checkpoint see it.
	if fi, err := w.Stat(ctx, "f"); err != nil || fi.Size() != 0 {
		t.Fatalf("library stat of a file being created: %v, %v", fi, err)
	}
	if ents, err := w.ReadDir(ctx, "."); err != nil || len(ents) != 1 || ents[0].Name() != "f" {
		t.Fatalf("library listing: %v, %v", ents, err)
	}
	if _, err := f.WriteString("abc"); err != nil {
		t.Fatal(err)
	}
	// tar: times, owner, mode on the descriptor, then close.
	mtime := time.Unix(1_000_000_000, 5)
	ok(t, os.Chtimes(p, mtime, mtime))
	ok(t, f.Chown(1000, 2000))
	ok(t, f.Chmod(0o600))
	check := func(how string, fi fs.FileInfo, size int64) {
		t.Helper()
		a := fi.Sys()
		var uid, gid uint32
		switch a := a.(type) {
		case *vfs.Attr:
			uid, gid = a.Uid, a.Gid
		case *syscall.Stat_t:
			uid, gid = a.Uid, a.Gid
		}
		if fi.Mode().Perm() != 0o600 || uid != 1000 || gid != 2000 || !fi.ModTime().Equal(mtime) || fi.Size() != size {
			t.Fatalf("%s: mode %v, owner %d:%d, mtime %v, size %d", how, fi.Mode(), uid, gid, fi.ModTime(), fi.Size())
		}
	}
	fi, err := os.Stat(p)
	ok(t, err)
	check("mount stat before close", fi, 3)
	fi, err = f.Stat()
	ok(t, err)
	check("fstat before close", fi, 3)
	fi, err = w.Stat(ctx, "f")
	ok(t, err)
	check("library stat before close", fi, 3) // the times staged the bytes
	ok(t, f.Close())
	fi, err = w.Stat(ctx, "f")
	ok(t, err)
	check("library stat after close", fi, 3)
	if data, err := w.ReadFile(ctx, "f"); err != nil || string(data) != "abc" {
		t.Fatalf("library read after close: %q, %v", data, err)
	}
	// A checkpoint taken at once holds it all.
	_, err = w.Checkpoint(ctx, "cp")
	ok(t, err)
	snap, err := w.At(ctx, "cp")
	ok(t, err)
	fi, err = snap.Stat(ctx, "f")
	ok(t, err)
	check("checkpoint", fi, 3)
}

// TestDeferredUnlink: unlinks through the mount commit in batches, but
// every surface sees each at once, the audit log records them, and a
// checkpoint taken at once lacks them.
func TestDeferredUnlink(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	w := create(t, st, "w", meta.Quota{})
	dir := mount(t, w.FS, fusefs.Options{})
	for _, n := range []string{"a", "b", "c"} {
		ok(t, w.WriteFile(ctx, n, []byte(n), 0o644))
	}
	ok(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	ok(t, os.Remove(filepath.Join(dir, "a")))
	if _, err := w.Stat(ctx, "a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("library stat after unlink: %v", err)
	}
	ok(t, os.Remove(filepath.Join(dir, "b")))
	ok(t, os.Remove(filepath.Join(dir, "d")))
	_, err := w.Checkpoint(ctx, "cp")
	ok(t, err)
	snap, err := w.At(ctx, "cp")
	ok(t, err)
	ents, err := snap.ReadDir(ctx, ".")
	ok(t, err)
	if len(ents) != 1 || ents[0].Name() != "c" {
		t.Fatalf("checkpoint after unlinks lists %v", ents)
	}
	ok(t, os.Remove(filepath.Join(dir, "c")))
	// Through the mount at once, and its fsync of the directory makes
	// it durable.
	if _, err := os.Stat(filepath.Join(dir, "c")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("mount stat after unlink: %v", err)
	}
	d, err := os.Open(dir)
	ok(t, err)
	ok(t, d.Sync())
	ok(t, d.Close())
	// The audit log records every removal, in entries of the kinds
	// ("fuse.mkdir+remove") and paths each gathering saw.
	deadline := time.Now().Add(10 * time.Second)
	for {
		es, err := st.AuditLog().Entries(ctx, audit.Filter{WorkspaceID: w.ID()})
		ok(t, err)
		var removed []string
		for _, e := range es {
			if ops, ok := strings.CutPrefix(e.Tool, "fuse."); ok && slices.Contains(strings.Split(ops, "+"), "remove") {
				removed = append(removed, e.Changed...)
			}
		}
		slices.Sort(removed)
		removed = slices.Compact(removed)
		if slices.Equal(removed, []string{"a", "b", "c", "d"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit log records removals of %v", removed)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
