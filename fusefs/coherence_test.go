package fusefs_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/forkspace/forkspace/fusefs"
	"github.com/forkspace/forkspace/meta"
)

// readMount returns the contents of name through the mount.
func readMount(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	ok(t, err)
	return string(data)
}

// TestCoherenceLibraryToMount: with an hour of kernel caching, a change
// made through the library (same size, so nothing but the invalidation
// can reveal it), a new name the kernel had cached as missing, a removal,
// a rename and a restore are all visible through the mount as soon as the
// library call returns.
func TestCoherenceLibraryToMount(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	w := create(t, st, "w", meta.Quota{})
	dir := mount(t, w.FS, fusefs.Options{CacheTimeout: time.Hour})
	ok(t, w.MkdirAll(ctx, "d", 0o755))
	ok(t, w.WriteFile(ctx, "d/f", []byte("aaaa"), 0o644))
	if got := readMount(t, dir, "d/f"); got != "aaaa" {
		t.Fatalf("mount reads %q", got)
	}
	ok(t, w.WriteFile(ctx, "d/f", []byte("bbbb"), 0o644))
	if got := readMount(t, dir, "d/f"); got != "bbbb" {
		t.Fatalf("after a library write the mount reads %q", got)
	}

	if _, err := os.Stat(filepath.Join(dir, "d/new")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat of a missing file: %v", err)
	}
	ok(t, w.WriteFile(ctx, "d/new", []byte("n"), 0o644))
	if got := readMount(t, dir, "d/new"); got != "n" {
		t.Fatalf("a new file reads %q", got)
	}
	ok(t, w.Chmod(ctx, "d/new", 0o600))
	fi, err := os.Stat(filepath.Join(dir, "d/new"))
	ok(t, err)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode after a library chmod: %v", fi.Mode())
	}

	_, err = w.Checkpoint(ctx, "cp")
	ok(t, err)
	ok(t, w.Rename(ctx, "d/f", "d/g"))
	if _, err := os.Stat(filepath.Join(dir, "d/f")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a renamed file still stats: %v", err)
	}
	if got := readMount(t, dir, "d/g"); got != "bbbb" {
		t.Fatalf("the renamed file reads %q", got)
	}
	ok(t, w.Remove(ctx, "d/new"))
	if _, err := os.Stat(filepath.Join(dir, "d/new")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a removed file still stats: %v", err)
	}

	ok(t, w.Restore(ctx, "cp"))
	if got := readMount(t, dir, "d/f"); got != "bbbb" {
		t.Fatalf("after restore d/f reads %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "d/g")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after restore d/g still stats: %v", err)
	}
	if got := readMount(t, dir, "d/new"); got != "n" {
		t.Fatalf("after restore d/new reads %q", got)
	}
}

// TestCoherenceMountToLibrary: a write through the mount is visible to
// the library once fsync returns (before close) and once close returns.
func TestCoherenceMountToLibrary(t *testing.T) {
	ctx := context.Background()
	w, dir := newMount(t)
	f, err := os.Create(filepath.Join(dir, "f"))
	ok(t, err)
	_, err = f.WriteString("synced")
	ok(t, err)
	ok(t, f.Sync())
	if data, err := w.ReadFile(ctx, "f"); err != nil || string(data) != "synced" {
		t.Fatalf("after fsync the library reads %q, %v", data, err)
	}
	_, err = f.WriteString(" closed")
	ok(t, err)
	ok(t, f.Close())
	if data, err := w.ReadFile(ctx, "f"); err != nil || string(data) != "synced closed" {
		t.Fatalf("after close the library reads %q, %v", data, err)
	}
	// cp -p sets times through the descriptor before closing: they stick.
	f, err = os.OpenFile(filepath.Join(dir, "f"), os.O_WRONLY|os.O_APPEND, 0)
	ok(t, err)
	_, err = f.WriteString("!")
	ok(t, err)
	mtime := time.Unix(1_000_000_000, 123456789)
	ok(t, os.Chtimes(filepath.Join(dir, "f"), mtime, mtime))
	ok(t, f.Close())
	fi, err := w.Stat(ctx, "f")
	ok(t, err)
	if !fi.ModTime().Equal(mtime) || fi.Size() != int64(len("synced closed!")) {
		t.Fatalf("library stat after utimensat and close: %v %d", fi.ModTime(), fi.Size())
	}
}
