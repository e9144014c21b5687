package forkspace_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// TestScratchFork: a scratch fork holds its parent's state, takes
// writes under its own quota without touching the parent, is in no
// listing (nor reachable by name), leaves no audit entry, is listed by
// its parent's ScratchForks, and DeleteScratch deletes only a scratch
// fork of that parent.
func TestScratchFork(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openStore(t, dir)
	w := mustCreate(t, st, "w")
	other := mustCreate(t, st, "other")
	write(t, w, "a", "parent")
	s, err := w.ScratchFork(ctx, "s1", meta.Quota{MaxBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := s.ReadFile(ctx, "a"); err != nil || string(b) != "parent" {
		t.Fatalf("scratch a = %q, %v", b, err)
	}
	write(t, s, "a", "scratch")
	if b, _ := w.ReadFile(ctx, "a"); string(b) != "parent" {
		t.Errorf("the parent's a became %q", b)
	}
	if err := s.WriteFile(ctx, "big", make([]byte, 200), 0o644); !errors.Is(err, errdefs.ErrQuota) {
		t.Errorf("write past the scratch fork's quota: %v", err)
	}
	infos, err := st.List(ctx)
	if err != nil || len(infos) != 2 {
		t.Errorf("listing shows %d workspaces (%v), want 2", len(infos), err)
	}
	if _, err := st.Workspace(ctx, s.Name()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("scratch fork by name: %v", err)
	}
	// A library write to the parent is audited; the scratch fork's
	// writes are not.
	write(t, w, "b", "audited")
	id := s.ID()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = openStore(t, dir)
	w, err = st.Workspace(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := st.AuditLog().Entries(ctx, audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	parent := 0
	for _, e := range entries {
		switch e.WorkspaceID {
		case id:
			t.Errorf("audit entry of the scratch fork: %+v", e)
		case w.ID():
			parent++
		}
	}
	if parent == 0 {
		t.Errorf("no audit entry of the parent's write among %d", len(entries))
	}
	ids, err := w.ScratchForks(ctx)
	if err != nil || len(ids) != 1 || ids[0] != id {
		t.Fatalf("ScratchForks = %v, %v; want [%s]", ids, err, id)
	}
	other, err = st.Workspace(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	if err := other.DeleteScratch(ctx, id); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("another workspace deletes the scratch fork: %v", err)
	}
	if err := w.DeleteScratch(ctx, other.ID()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("DeleteScratch of a plain workspace: %v", err)
	}
	if err := w.DeleteScratch(ctx, id); err != nil {
		t.Fatal(err)
	}
	if ids, err := w.ScratchForks(ctx); err != nil || len(ids) != 0 {
		t.Errorf("after DeleteScratch: %v, %v", ids, err)
	}
	// Deleting a workspace deletes its scratch forks.
	// By name too, before or after it is made; names are unique; and
	// deleting a workspace deletes its scratch forks.
	if err := w.DeleteScratch(ctx, "s2"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("DeleteScratch of a name not made yet: %v", err)
	}
	if _, err := w.ScratchFork(ctx, "s2", meta.Quota{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ScratchFork(ctx, "s2", meta.Quota{}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a second scratch fork named s2: %v", err)
	}
	if err := w.DeleteScratch(ctx, "s2"); err != nil {
		t.Fatal(err)
	}
	s, err = w.ScratchFork(ctx, "s3", meta.Quota{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	if err := other.DeleteScratch(ctx, s.ID()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the scratch fork of a deleted workspace: %v", err)
	}
}
