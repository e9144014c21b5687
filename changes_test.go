package forkspace_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/feed"
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
