package forkspace_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/feed"
	"github.com/forkspace/forkspace/fusefs"
	"github.com/forkspace/forkspace/fusefs/fusetest"
)

// feedTools reads the store's feed from the start and returns "tool
// path,path" per entry of workspace id.
func feedTools(t *testing.T, st *forkspace.Store, id string) []string {
	t.Helper()
	c, err := st.Feed().Subscribe(t.Context(), 0, feed.Filter{WorkspaceID: id})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for c.Seq() < st.Feed().Last() {
		es, err := c.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			out = append(out, e.Tool+" "+strings.Join(e.Changed, ","))
		}
	}
	return out
}

// TestFeedLibrarySurfaces: changes no audited call covers are in the
// feed too — a mount's index and refresh, hydration of a lazy file,
// plain library calls, a restore — and a change an audited call makes
// is its entry alone; what is pending when the store closes is recorded
// before it closes, and read back after a reopen.
func TestFeedLibrarySurfaces(t *testing.T) {
	ctx := context.Background()
	dir, host := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "notes.md"), []byte("host notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, w := hostMounted(t, dir, host, "?mode=rw&writeback=manual", "ws")
	id := w.ID()
	if _, err := w.ReadFile(ctx, "host/notes.md"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(host, "more.md"), []byte("more"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.Refresh(ctx, "/host"); err != nil {
		t.Fatal(err)
	}
	cp, err := w.Checkpoint(ctx, "before")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(audit.WithActor(ctx, audit.Actor{Name: "lib"}), "a.txt", []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	aw, err := st.Audited(ctx, "ws", forkspace.AuditOptions{Actor: audit.Actor{Name: "agent"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := aw.WriteFile(ctx, "b.txt", []byte("b"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.Restore(ctx, cp.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st, err = forkspace.Open(ctx, forkspace.Options{Dir: dir, MountDrivers: mountDrivers})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Changes still pending when the next alike one comes are one entry:
	// the second indexing is its own entry only if the first was
	// recorded by then, so compare first occurrences.
	var got []string
	for _, e := range feedTools(t, st, id) {
		if !slices.Contains(got, e) {
			got = append(got, e)
		}
	}
	want := []string{
		"mount.index host",
		"mount.hydrate host/notes.md",
		"library.write a.txt",
		"library.WriteFile b.txt",
		"library.reset .",
	}
	if !slices.Equal(got, want) {
		t.Errorf("feed of the workspace:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestEntriesSeeEarlierChanges: a change no audited call covers is
// noted after the fact and appended a moment later, but a reader of the
// log, or of the history, sees it as soon as the call that made it
// returned.
func TestEntriesSeeEarlierChanges(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	w := mustCreate(t, st, "w")
	for i := range 20 {
		name := fmt.Sprint("f", i)
		if err := w.WriteFile(ctx, name, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		es := entries(t, st, w)
		if len(es) == 0 || !slices.Contains(es[0].Changed, name) {
			t.Fatalf("write %d: newest entry %+v, want one listing %s", i, es[:min(len(es), 1)], name)
		}
	}
	steps, err := st.History(ctx, "w", forkspace.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) == 0 || !slices.Contains(steps[0].Changed, "f19") {
		t.Fatalf("history %+v: want the last write first", steps[:min(len(steps), 1)])
	}
}

// TestFUSEGathering: a burst of mixed operations through a FUSE mount,
// gathered at once, is one entry of the workspace naming every kind and
// every path, with one history state, and time travel reads and restores
// the workspace as it was before and after the burst.
func TestFUSEGathering(t *testing.T) {
	fusetest.Require(t)
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	w := mustCreate(t, st, "w")
	mnt := t.TempDir()
	srv, err := fusefs.Mount(ctx, mnt, w.FS, fusefs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	at := func(name string) string { return filepath.Join(mnt, name) }
	syncDir := func(name string) {
		t.Helper()
		d, err := os.Open(at(name))
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(d.Sync(), d.Close()); err != nil {
			t.Fatal(err)
		}
	}
	burst := func(fn func() error) audit.Entry {
		t.Helper()
		release := st.HoldUncovered()
		err := fn()
		syncDir(".")
		release()
		if err != nil {
			t.Fatal(err)
		}
		es := entries(t, st, w)
		if len(es) == 0 {
			t.Fatal("no audit entry")
		}
		return es[0]
	}

	before := burst(func() error { return os.WriteFile(at("keep.txt"), []byte("kept"), 0o644) })
	n := len(entries(t, st, w))
	after := burst(func() error {
		return errors.Join(
			os.Mkdir(at("d"), 0o755),
			os.WriteFile(at("d/a"), []byte("a"), 0o644),
			os.WriteFile(at("d/b"), []byte("b"), 0o644),
			os.Chmod(at("d/a"), 0o600),
			os.Chtimes(at("d/b"), time.Unix(1e9, 0), time.Unix(1e9, 0)),
			os.Rename(at("d/b"), at("d/c")),
			os.Symlink("a", at("d/link")),
			os.Remove(at("keep.txt")),
		)
	})
	if got := len(entries(t, st, w)); got != n+1 {
		t.Fatalf("the burst recorded %d entries, want 1: %+v", got-n, entries(t, st, w)[:got-n])
	}
	t.Logf("burst entry: %s %v", after.Tool, after.Changed)
	ops, ok := strings.CutPrefix(after.Tool, "fuse.")
	if !ok || !after.State {
		t.Fatalf("burst entry %+v: want a fuse entry with a state", after)
	}
	for _, op := range []string{"mkdir", "open", "chmod", "lchtimes", "rename", "symlink", "remove"} {
		if !slices.Contains(strings.Split(ops, "+"), op) {
			t.Errorf("burst entry %s lacks kind %s", after.Tool, op)
		}
	}
	for _, p := range []string{"d", "d/a", "d/b", "d/c", "d/link", "keep.txt"} {
		if !slices.Contains(after.Changed, p) {
			t.Errorf("burst entry lists %v, lacking %s", after.Changed, p)
		}
	}

	ref := func(e audit.Entry) string { return "audit:" + strconv.FormatInt(e.Seq, 10) }
	old := snapshot(t, st, "w@"+ref(before))
	if got := read(t, old, "keep.txt"); got != "kept" {
		t.Errorf("before the burst keep.txt = %q", got)
	}
	if _, err := old.Stat(ctx, "d"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("before the burst d: %v", err)
	}
	if err := w.Restore(ctx, ref(before)); err != nil {
		t.Fatal(err)
	}
	if err := w.Restore(ctx, ref(after)); err != nil {
		t.Fatal(err)
	}
	if got := read(t, w.FS, "d/a") + read(t, w.FS, "d/c"); got != "ab" {
		t.Errorf("restored after the burst d/a, d/c = %q", got)
	}
	if fi, err := w.Lstat(ctx, "d/a"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("restored after the burst d/a: %v, %v", fi, err)
	}
	if target, err := w.Readlink(ctx, "d/link"); err != nil || target != "a" {
		t.Errorf("restored after the burst d/link -> %q, %v", target, err)
	}
	for _, p := range []string{"keep.txt", "d/b"} {
		if _, err := w.Lstat(ctx, p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("restored after the burst %s: %v", p, err)
		}
	}
}
