package forkspace_test

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/vfs"
)

func names(ws []*forkspace.Workspace) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Name()
	}
	return out
}

func workspaceNames(t *testing.T, st *forkspace.Store) []string {
	t.Helper()
	infos, err := st.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(infos))
	for i, in := range infos {
		out[i] = in.Name
	}
	return out
}

// TestForkN: n forks in one call, named PREFIX-K for the smallest free K,
// each holding the source's live state (staged changes included), with
// one checkpoint of the source they all start from; bad calls change
// nothing.
func TestForkN(t *testing.T) {
	ctx := context.Background()
	st, _ := openWithMeta(t)
	w := mustCreate(t, st, "job")
	write(t, w, "a.txt", "a\n")
	if err := w.Fold(ctx); err != nil {
		t.Fatal(err)
	}
	write(t, w, "b.txt", "staged\n")
	mustFork(t, w, "job-2") // taken: skipped
	forks, err := w.ForkN(ctx, 3, forkspace.ForkNOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(forks); !slices.Equal(got, []string{"job-1", "job-3", "job-4"}) {
		t.Fatalf("names %v", got)
	}
	cps, err := w.Checkpoints(ctx)
	if err != nil || len(cps) != 1 || !strings.HasPrefix(cps[0].Label, "fork 3 ways: job-1 … job-4") {
		t.Fatalf("checkpoints %v %v", cps, err)
	}
	for _, f := range forks {
		if got := files(t, f.FS); got["a.txt"] != "a\n" || got["b.txt"] != "staged\n" || len(got) != 2 {
			t.Errorf("%s holds %v", f.Name(), got)
		}
		if f.ParentID() != w.ID() {
			t.Errorf("%s parent %s", f.Name(), f.ParentID())
		}
		parent, err := st.Parent(ctx, f.Name())
		if err != nil || parent != w.ID()+"@"+cps[0].ID {
			t.Errorf("%s forked from %q %v", f.Name(), parent, err)
		}
	}
	write(t, forks[0], "a.txt", "changed\n")
	if read(t, w.FS, "a.txt") != "a\n" || read(t, forks[1].FS, "a.txt") != "a\n" {
		t.Error("a fork's write reached another workspace")
	}

	before := workspaceNames(t, st)
	for _, c := range []struct {
		n    int
		opts forkspace.ForkNOptions
		want error
	}{
		{0, forkspace.ForkNOptions{}, fs.ErrInvalid},
		{forkspace.MaxForks + 1, forkspace.ForkNOptions{}, fs.ErrInvalid},
		{2, forkspace.ForkNOptions{Names: []string{"x"}}, fs.ErrInvalid},
		{2, forkspace.ForkNOptions{Names: []string{"x", "x"}}, fs.ErrInvalid},
		{2, forkspace.ForkNOptions{Names: []string{"x", "bad/name"}}, fs.ErrInvalid},
		{2, forkspace.ForkNOptions{Names: []string{"x", "job-3"}}, fs.ErrExist},
		{2, forkspace.ForkNOptions{Prefix: "no/slash"}, fs.ErrInvalid},
	} {
		if _, err := w.ForkN(ctx, c.n, c.opts); !errors.Is(err, c.want) {
			t.Errorf("ForkN(%d, %+v) = %v, want %v", c.n, c.opts, err, c.want)
		}
	}
	if after := workspaceNames(t, st); !slices.Equal(before, after) {
		t.Errorf("failed ForkN changed the workspaces: %v -> %v", before, after)
	}
	if cps2, _ := w.Checkpoints(ctx); len(cps2) != 1 {
		t.Errorf("failed ForkN left checkpoints: %v", cps2)
	}
	forks, err = w.ForkN(ctx, 2, forkspace.ForkNOptions{Names: []string{"zeta", "alpha"}})
	if err != nil || !slices.Equal(names(forks), []string{"alpha", "zeta"}) {
		t.Fatalf("named forks %v %v", names(forks), err)
	}
}

// TestCompare: the change-count matrix and the pair diffs of N states
// agree with Store.Diff.
func TestCompare(t *testing.T) {
	ctx := context.Background()
	st, _ := openWithMeta(t)
	w := mustCreate(t, st, "job")
	write(t, w, "a.txt", "a\n")
	forks, err := w.ForkN(ctx, 3, forkspace.ForkNOptions{})
	if err != nil {
		t.Fatal(err)
	}
	write(t, forks[0], "one.txt", "1")
	write(t, forks[1], "two.txt", "2")
	write(t, forks[1], "three.txt", "3")
	if err := forks[2].Remove(ctx, "a.txt"); err != nil {
		t.Fatal(err)
	}
	states := []string{"job", "job-1", "job-2", "job-3"}
	cmp, err := st.Compare(ctx, states, vfs.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{
		{0, 1, 2, 1},
		{1, 0, 3, 2},
		{2, 3, 0, 3},
		{1, 2, 3, 0},
	}
	for i := range want {
		if !slices.Equal(cmp.Changes[i], want[i]) {
			t.Errorf("row %d: %v, want %v", i, cmp.Changes[i], want[i])
		}
	}
	if len(cmp.Pairs) != 6 {
		t.Fatalf("%d pairs", len(cmp.Pairs))
	}
	for _, p := range cmp.Pairs {
		d, err := st.Diff(ctx, p.From, p.To, vfs.DiffOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(d) != len(p.Changes) {
			t.Errorf("%s..%s: %d changes, Diff says %d", p.From, p.To, len(p.Changes), len(d))
		}
	}
	for _, bad := range [][]string{{"job"}, {"job", "job"}, {"job", "nope"}, {"job", "job@nope"}} {
		_, err := st.Compare(ctx, bad, vfs.DiffOptions{})
		if !errors.Is(err, fs.ErrInvalid) && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Compare(%v) = %v", bad, err)
		}
	}
}

// TestPromote: merging the winner into its parent, or making it the head,
// deletes the other forks of the same ForkN and keeps everything else.
func TestPromote(t *testing.T) {
	ctx := context.Background()
	st, _ := openWithMeta(t)
	w := mustCreate(t, st, "job")
	write(t, w, "a.txt", "a\n")
	other := mustFork(t, w, "unrelated")
	forks, err := w.ForkN(ctx, 3, forkspace.ForkNOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sib, err := st.Siblings(ctx, "job-2"); err != nil || !slices.Equal(sib, []string{"job-1", "job-3"}) {
		t.Errorf("siblings of job-2: %v %v", sib, err)
	}
	if _, err := st.Siblings(ctx, "unrelated"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("siblings of a plain fork: %v", err)
	}
	if free, err := st.FreeNames(ctx, "job", 2); err != nil || !slices.Equal(free, []string{"job-4", "job-5"}) {
		t.Errorf("free names: %v %v", free, err)
	}
	write(t, forks[1], "win.txt", "won\n")
	write(t, w, "parent.txt", "p\n")
	res, err := st.Promote(ctx, "job-2", forkspace.PromoteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Into != "job" || res.Winner != "job-2" || !slices.Equal(res.Deleted, []string{"job-1", "job-3"}) || res.Merge == nil || res.Checkpoint == "" {
		t.Errorf("result %+v", res)
	}
	if got := files(t, w.FS); got["win.txt"] != "won\n" || got["parent.txt"] != "p\n" {
		t.Errorf("parent after promote: %v", got)
	}
	if got := workspaceNames(t, st); !slices.Equal(got, []string{"job", "job-2", "unrelated"}) {
		t.Errorf("workspaces %v", got)
	}
	_ = other

	// Head: the parent's own changes since the fork are dropped (kept in
	// the checkpoint).
	forks, err = w.ForkN(ctx, 2, forkspace.ForkNOptions{Prefix: "try"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, forks[0], "head.txt", "h\n")
	write(t, w, "lost.txt", "l\n")
	res, err = st.Promote(ctx, "try-1", forkspace.PromoteOptions{Head: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := files(t, w.FS); got["head.txt"] != "h\n" || got["lost.txt"] != "" {
		t.Errorf("parent after head promote: %v", got)
	}
	at, err := w.At(ctx, res.Checkpoint)
	if err != nil || read(t, at, "lost.txt") != "l\n" {
		t.Errorf("checkpoint before head promote: %v", err)
	}
	if !slices.Equal(res.Deleted, []string{"try-2"}) {
		t.Errorf("deleted %v", res.Deleted)
	}

	// A stopped merge deletes nothing; a plain fork has no siblings.
	forks, err = w.ForkN(ctx, 2, forkspace.ForkNOptions{Prefix: "c"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, forks[0], "a.txt", "fork\n")
	write(t, w, "a.txt", "parent\n")
	before := workspaceNames(t, st)
	_, err = st.Promote(ctx, "c-1", forkspace.PromoteOptions{Policy: forkspace.MergeFail})
	if !errors.Is(err, errdefs.ErrConflict) {
		t.Errorf("promote with a conflict and fail: %v", err)
	}
	for _, c := range []struct {
		winner string
		opts   forkspace.PromoteOptions
		want   error
	}{
		{"unrelated", forkspace.PromoteOptions{}, fs.ErrInvalid},
		{"job", forkspace.PromoteOptions{}, fs.ErrInvalid},
		{"nope", forkspace.PromoteOptions{}, fs.ErrNotExist},
		{"c-1", forkspace.PromoteOptions{Head: true, Policy: forkspace.MergeOurs}, fs.ErrInvalid},
	} {
		if _, err := st.Promote(ctx, c.winner, c.opts); !errors.Is(err, c.want) {
			t.Errorf("Promote(%s, %+v) = %v, want %v", c.winner, c.opts, err, c.want)
		}
	}
	if after := workspaceNames(t, st); !slices.Equal(before, after) {
		t.Errorf("refused promotes changed the workspaces: %v -> %v", before, after)
	}
	if read(t, w.FS, "a.txt") != "parent\n" {
		t.Error("refused promotes changed the parent")
	}
	if _, err := st.Promote(ctx, "unrelated", forkspace.PromoteOptions{Keep: true}); err != nil {
		t.Errorf("promote a plain fork with keep: %v", err)
	}
}
