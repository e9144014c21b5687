package forkspace_test

import (
	"context"
	"errors"
	"io/fs"
	"strconv"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/vfs"
)

// audited opens an audited handle on workspace name of st.
func audited(t *testing.T, st *forkspace.Store, name string) *forkspace.Audited {
	t.Helper()
	a, err := st.Audited(context.Background(), name, forkspace.AuditOptions{Actor: audit.Actor{Name: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// entries returns the audit entries of workspace w, newest first.
func entries(t *testing.T, st *forkspace.Store, w *forkspace.Workspace) []audit.Entry {
	t.Helper()
	es, err := st.AuditLog().Entries(context.Background(), audit.Filter{WorkspaceID: w.ID()})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestTimeTravel reads, diffs, forks and restores a workspace as of audited
// steps named each way, and checks the errors of refs that name nothing.
func TestTimeTravel(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	mustCreate(t, st, "w")
	other := mustCreate(t, st, "other")
	a := audited(t, st, "w")
	for i := range 5 {
		if err := a.WriteFile(ctx, "f", []byte("v"+strconv.Itoa(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Remove(ctx, "f"); err != nil {
		t.Fatal(err)
	}
	es := entries(t, st, a.Workspace)
	if len(es) != 6 || !es[0].State {
		t.Fatalf("entries: %+v", es)
	}
	// ~0 is the state after the newest call (f removed), ~1 after v4.
	if _, err := snapshot(t, st, "w@~0").ReadFile(ctx, "f"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("w@~0 f: %v", err)
	}
	for back := 1; back <= 5; back++ {
		want := "v" + strconv.Itoa(5-back)
		if got := read(t, snapshot(t, st, "w@~"+strconv.Itoa(back)), "f"); got != want {
			t.Errorf("w@~%d f = %q, want %q", back, got, want)
		}
		ref := "w@audit:" + strconv.FormatInt(es[back].Seq, 10)
		if got := read(t, snapshot(t, st, ref), "f"); got != want {
			t.Errorf("%s f = %q, want %q", ref, got, want)
		}
		asOf := "w@" + es[back].Time.Format(time.RFC3339Nano)
		if got := read(t, snapshot(t, st, asOf), "f"); got != want {
			t.Errorf("%s f = %q, want %q", asOf, got, want)
		}
	}
	changes, err := st.Diff(ctx, "w@~3", "w@~1", vfs.DiffOptions{})
	if err != nil || len(changes) != 1 || changes[0].Path != "f" || changes[0].Op != vfs.Modified {
		t.Fatalf("diff w@~3 w@~1 = %+v, %v", changes, err)
	}
	f, err := a.Workspace.Fork(ctx, "f2", forkspace.ForkOptions{Checkpoint: "~2"})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, f.FS, "f"); got != "v3" {
		t.Fatalf("fork at ~2 reads %q", got)
	}
	if p, err := st.Parent(ctx, "f2"); err != nil || p != a.ID()+"@audit:"+strconv.FormatInt(es[2].Seq, 10) {
		t.Fatalf("Parent(f2) = %q, %v", p, err)
	}
	if err := a.Workspace.Restore(ctx, "~4"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, a.FS, "f"); got != "v1" {
		t.Fatalf("after restore to ~4 f = %q", got)
	}

	bad := []struct {
		state string
		want  error
	}{
		{"w@~100", forkspace.ErrHistoryExpired},
		{"w@~-1", fs.ErrInvalid},
		{"w@~x", fs.ErrInvalid},
		{"w@~01", fs.ErrInvalid},
		{"w@audit:", fs.ErrInvalid},
		{"w@audit:zz", fs.ErrInvalid},
		{"w@audit:999999", fs.ErrNotExist},
		{"w@2026-13-45T99:00:00Z", fs.ErrInvalid},
		{"w@2001-01-01T00:00:00Z", forkspace.ErrHistoryExpired},
		{"other@~0", forkspace.ErrHistoryExpired},
		{"other@audit:" + strconv.FormatInt(es[0].Seq, 10), forkspace.ErrOtherWorkspace},
	}
	for _, b := range bad {
		if _, err := st.Snapshot(ctx, b.state); !errors.Is(err, b.want) {
			t.Errorf("Snapshot(%s) = %v, want %v", b.state, err, b.want)
		}
	}
	if !errors.Is(forkspace.ErrOtherWorkspace, fs.ErrInvalid) || !errors.Is(forkspace.ErrHistoryExpired, fs.ErrNotExist) {
		t.Error("sentinels do not wrap io/fs ones")
	}
	if err := other.Restore(ctx, "audit:"+strconv.FormatInt(es[1].Seq, 10)); !errors.Is(err, forkspace.ErrOtherWorkspace) {
		t.Errorf("restore other to w's entry: %v", err)
	}
	if _, err := a.Workspace.Checkpoint(ctx, "~1"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("checkpoint labelled ~1: %v", err)
	}
	if err := a.Workspace.DeleteCheckpoint(ctx, "~1"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("delete checkpoint ~1: %v", err)
	}
}

// TestHistorySteps lists a workspace's steps with their changed paths and
// state refs, and reads each ref back.
func TestHistorySteps(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	mustCreate(t, st, "w")
	a := audited(t, st, "w")
	for i := range 3 {
		if err := a.WriteFile(ctx, "f"+strconv.Itoa(i), []byte{byte('a' + i)}, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Remove(ctx, "nope"); err == nil {
		t.Fatal("removing a missing file succeeded")
	}
	steps, err := st.History(ctx, "w", forkspace.HistoryOptions{})
	if err != nil || len(steps) != 4 {
		t.Fatalf("History = %+v, %v", steps, err)
	}
	if steps[0].Error == "" || steps[0].Back != "w@~0" || steps[3].Back != "w@~3" || steps[3].Changed[0] != "f0" {
		t.Fatalf("steps: %+v", steps)
	}
	for i, s := range steps {
		for _, ref := range []string{s.State, s.Back} {
			f := snapshot(t, st, ref)
			_, err := f.Stat(ctx, "f2")
			if exists := err == nil; exists != (i <= 1) {
				t.Errorf("%s: f2 exists %v", ref, exists)
			}
		}
	}
	page, err := st.History(ctx, "w", forkspace.HistoryOptions{Limit: 2, Before: steps[1].Seq})
	if err != nil || len(page) != 2 || page[0].Seq != steps[2].Seq || page[0].Back != "" || page[0].State == "" {
		t.Fatalf("second page: %+v, %v", page, err)
	}
	if _, err := st.History(ctx, "missing", forkspace.HistoryOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("History(missing) = %v", err)
	}
	if _, err := st.History(ctx, "w", forkspace.HistoryOptions{Limit: -1}); !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf("History(limit -1) = %v", err)
	}
}
