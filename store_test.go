package forkspace_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
	_ "modernc.org/sqlite" // the "sqlite" driver, to damage a page directly
)

func openStore(t *testing.T, dir string) *forkspace.Store {
	t.Helper()
	st, err := openPass(t, forkspace.Options{Dir: dir})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func mustCreate(t testing.TB, st *forkspace.Store, name string) *forkspace.Workspace {
	t.Helper()
	w, err := st.Create(context.Background(), name, forkspace.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return w
}

func write(t *testing.T, w *forkspace.Workspace, name, data string) {
	t.Helper()
	if err := w.MkdirAll(context.Background(), filepath.Dir(name), 0o755); err != nil {
		t.Fatalf("mkdir for %s: %v", name, err)
	}
	if err := w.WriteFile(context.Background(), name, []byte(data), 0o644); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
}

func read(t *testing.T, f *vfs.FS, name string) string {
	t.Helper()
	b, err := f.ReadFile(context.Background(), name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return string(b)
}

func TestWorkspaceLifecycle(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	a := mustCreate(t, st, "a")
	write(t, a, "src/main.go", "package main\n")
	write(t, a, "README.md", "v1\n")

	cp, err := a.Checkpoint(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	write(t, a, "README.md", "v2\n")

	b, err := a.Fork(ctx, "b", forkspace.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	write(t, b, "README.md", "fork\n")
	if err := b.Remove(ctx, "src/main.go"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, a.FS, "README.md"); got != "v2\n" {
		t.Fatalf("a sees the fork's write: %q", got)
	}
	if _, err := a.Stat(ctx, "src/main.go"); err != nil {
		t.Fatalf("a lost a file the fork removed: %v", err)
	}

	view, err := a.At(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, view, "README.md"); got != "v1\n" {
		t.Fatalf("checkpoint reads %q", got)
	}
	if err := view.WriteFile(ctx, "x", nil, 0o644); !errors.Is(err, errdefs.ErrReadOnly) {
		t.Fatalf("write to a checkpoint: %v, want ErrReadOnly", err)
	}

	c, err := a.Fork(ctx, "c", forkspace.ForkOptions{Checkpoint: cp.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, c.FS, "README.md"); got != "v1\n" {
		t.Fatalf("fork of a checkpoint reads %q", got)
	}

	if err := a.Restore(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, a.FS, "README.md"); got != "v1\n" {
		t.Fatalf("restored workspace reads %q", got)
	}

	changes, err := st.Diff(ctx, "a", "b", vfs.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]vfs.Op{}
	for _, ch := range changes {
		got[ch.Path] = ch.Op
	}
	if got["README.md"] != vfs.Modified || got["src/main.go"] != vfs.Deleted || len(got) != 2 {
		t.Fatalf("diff a b = %+v", changes)
	}
	parent, err := st.Parent(ctx, "c")
	if err != nil || parent != a.ID()+"@"+cp.ID {
		t.Fatalf("parent of c = %q, %v", parent, err)
	}

	infos, err := st.List(ctx)
	if err != nil || len(infos) != 3 {
		t.Fatalf("list: %d workspaces, %v", len(infos), err)
	}
	info, err := a.Info(ctx)
	if err != nil || info.Entries != 3 || info.Bytes != int64(len("package main\n")+len("v1\n")) || info.Checkpoints != 1 {
		t.Fatalf("info = %+v, %v", info, err)
	}

	if err := st.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, b.FS, "README.md"); got != "fork\n" {
		t.Fatalf("deleting the parent changed the fork: %q", got)
	}
	if _, err := st.Workspace(ctx, "a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("deleted workspace still opens: %v", err)
	}
	if _, err := a.Stat(ctx, "README.md"); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("handle of a deleted workspace: %v, want ErrClosed", err)
	}
}

func TestBadInputChangesNothing(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	a := mustCreate(t, st, "a")
	for _, tc := range []struct {
		name string
		err  error
		do   func() error
	}{
		{"duplicate name", fs.ErrExist, func() error { _, err := st.Create(ctx, "a", forkspace.CreateOptions{}); return err }},
		{"bad name", fs.ErrInvalid, func() error { _, err := st.Create(ctx, "../x", forkspace.CreateOptions{}); return err }},
		{"reserved name", fs.ErrInvalid, func() error { _, err := st.Create(ctx, "ws-abc", forkspace.CreateOptions{}); return err }},
		{"negative quota", fs.ErrInvalid, func() error {
			_, err := st.Create(ctx, "q", forkspace.CreateOptions{Quota: meta.Quota{MaxBytes: -1}})
			return err
		}},
		{"missing workspace", fs.ErrNotExist, func() error { _, err := st.Workspace(ctx, "nope"); return err }},
		{"delete missing workspace", fs.ErrNotExist, func() error { return st.Delete(ctx, "nope") }},
		{"missing checkpoint", fs.ErrNotExist, func() error { return a.Restore(ctx, "nope") }},
		{"fork of missing checkpoint", fs.ErrNotExist, func() error {
			_, err := a.Fork(ctx, "f", forkspace.ForkOptions{Checkpoint: "cp-nope"})
			return err
		}},
		{"fork onto a taken name", fs.ErrExist, func() error { _, err := a.Fork(ctx, "a", forkspace.ForkOptions{}); return err }},
		{"bad state", fs.ErrInvalid, func() error { _, err := st.Diff(ctx, "a@", "a", vfs.DiffOptions{}); return err }},
		{"label with NUL", fs.ErrInvalid, func() error { _, err := a.Checkpoint(ctx, "x\x00"); return err }},
	} {
		if err := tc.do(); !errors.Is(err, tc.err) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		}
	}
	infos, err := st.List(ctx)
	if err != nil || len(infos) != 1 {
		t.Fatalf("bad input left %d workspaces (%v)", len(infos), err)
	}
	if cps, _ := a.Checkpoints(ctx); len(cps) != 0 {
		t.Fatalf("bad input left %d checkpoints", len(cps))
	}
}

// TestReusedLabelNamesNewest: a label taken twice names the newest
// checkpoint with it for restore, At, Diff, fork and delete; the older one
// stays reachable by ID, and after the newest is deleted the label falls
// back to it.
func TestReusedLabelNamesNewest(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	a := mustCreate(t, st, "a")
	write(t, a, "f", "v1")
	old, err := a.Checkpoint(ctx, "same")
	if err != nil {
		t.Fatal(err)
	}
	write(t, a, "f", "v2")
	if _, err := a.Checkpoint(ctx, "same"); err != nil {
		t.Fatal(err)
	}
	write(t, a, "f", "v3")
	changes, err := st.Diff(ctx, "a@same", "a", vfs.DiffOptions{})
	if err != nil || len(changes) != 1 || changes[0].Path != "f" {
		t.Fatalf("diff a@same a = %v, %v; want one change of f", changes, err)
	}
	view, err := a.At(ctx, "same")
	if err != nil || read(t, view, "f") != "v2" {
		t.Fatalf("At(same): %v", err)
	}
	fork, err := a.Fork(ctx, "b", forkspace.ForkOptions{Checkpoint: "same"})
	if err != nil || read(t, fork.FS, "f") != "v2" {
		t.Fatalf("fork at same: %v", err)
	}
	if err := a.Restore(ctx, "same"); err != nil || read(t, a.FS, "f") != "v2" {
		t.Fatalf("restore by a reused label: %v", err)
	}
	if err := a.Restore(ctx, old.ID); err != nil || read(t, a.FS, "f") != "v1" {
		t.Fatalf("restore the older one by ID: %v", err)
	}
	if err := a.DeleteCheckpoint(ctx, "same"); err != nil {
		t.Fatal(err)
	}
	write(t, a, "f", "v4")
	if err := a.Restore(ctx, "same"); err != nil || read(t, a.FS, "f") != "v1" {
		t.Fatalf("restore after deleting the newest: %v", err)
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := openPass(t, forkspace.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	a := mustCreate(t, st, "a")
	write(t, a, "staged.txt", "only in staging")
	big := make([]byte, 700<<10) // chunked: larger than the inline limit and the minimum chunk
	for i := range big {
		big[i] = byte(i * 7)
	}
	write(t, a, "big.bin", string(big))
	if _, err := a.Checkpoint(ctx, "cp"); err != nil {
		t.Fatal(err)
	}
	write(t, a, "after.txt", "after the checkpoint")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st = openStore(t, dir)
	a, err = st.Workspace(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, a.FS, "after.txt"); got != "after the checkpoint" {
		t.Fatalf("after reopen: %q", got)
	}
	if got := read(t, a.FS, "big.bin"); got != string(big) {
		t.Fatal("big file differs after reopen")
	}
	view, err := a.At(ctx, "cp")
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(view.IOFS(ctx), "staged.txt", "big.bin"); err != nil {
		t.Fatal(err)
	}
}

func TestStoreLockedByOneProcess(t *testing.T) {
	dir := t.TempDir()
	openStore(t, dir)
	_, err := forkspace.Open(context.Background(), forkspace.Options{Dir: dir})
	if !errors.Is(err, errdefs.ErrBusy) {
		t.Fatalf("second open: %v, want ErrBusy", err)
	}
}

func TestCorruptStoreFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "meta.db"), []byte("this is not a database, just garbage bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := forkspace.Open(context.Background(), forkspace.Options{Dir: dir})
	if !errors.Is(err, errdefs.ErrCorrupt) {
		t.Fatalf("open of a garbage database: %v, want ErrCorrupt", err)
	}

	// A truncated copy of a real store.
	dir = t.TempDir()
	st := openStore(t, dir)
	w := mustCreate(t, st, "a")
	write(t, w, "f", "x")
	st.Close()
	db := filepath.Join(dir, "meta.db")
	if err := os.Truncate(db, 4096); err != nil {
		t.Fatal(err)
	}
	os.Remove(db + "-wal")
	os.Remove(db + "-shm")
	st2, err := forkspace.Open(context.Background(), forkspace.Options{Dir: dir})
	if err == nil {
		_, err = st2.Workspace(context.Background(), "a")
		st2.Close()
	}
	if !errors.Is(err, errdefs.ErrCorrupt) {
		t.Fatalf("open of a truncated database: %v, want ErrCorrupt", err)
	}
}

// TestCheckFindsDamagedMetadata damages one leaf page of the inline-body
// table inside a whole database file: Open, which reads the header and
// schema only, succeeds, and Check (fsck) reports a "metadata" problem.
func TestCheckFindsDamagedMetadata(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openStore(t, dir)
	w := mustCreate(t, st, "a")
	for i := range 400 {
		write(t, w, fmt.Sprintf("d/f%03d", i), strings.Repeat(fmt.Sprint(i), 500))
	}
	if _, err := w.Checkpoint(ctx, "filled"); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "meta.db")
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	var page, size int64
	err = raw.QueryRow(`SELECT pageno, pgsize FROM dbstat WHERE name = 'inline_bodies' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1 OFFSET 5`).Scan(&page, &size)
	raw.Close()
	if err != nil {
		t.Fatalf("find a leaf page of inline_bodies: %v", err)
	}
	f, err := os.OpenFile(db, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5}, int(size)), (page-1)*size); err != nil {
		t.Fatal(err)
	}
	f.Close()

	st = openStore(t, dir)
	r, err := st.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Clean() || r.Problems[0].Kind != "metadata" {
		t.Fatalf("Check of a damaged metadata page: %+v, want a metadata problem first", r.Problems)
	}
}
