package forkspace_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
)

// TestListMatchesUsage drives workspaces through random writes, removals,
// folds, checkpoints and forks, and checks that List, which reads stored
// usage records without opening workspaces, reports for each one what its
// opened workspace reports, before and after a reopen (when no workspace
// is open).
func TestListMatchesUsage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := openPass(t, forkspace.Options{Dir: dir, FoldRows: 24})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	ws := []*forkspace.Workspace{mustCreate(t, st, "empty"), mustCreate(t, st, "w0")}
	for step := range 300 {
		w := ws[1+rng.IntN(len(ws)-1)]
		name := fmt.Sprintf("d%d/f%d", rng.IntN(3), rng.IntN(40))
		switch op := rng.IntN(20); {
		case op < 12:
			write(t, w, name, strings.Repeat("x", rng.IntN(3000)))
		case op < 16:
			_ = w.Remove(ctx, name) // may be missing
		case op < 17:
			if err := w.Fold(ctx); err != nil {
				t.Fatal(err)
			}
		case op < 18:
			if _, err := w.Checkpoint(ctx, ""); err != nil {
				t.Fatal(err)
			}
		default:
			f, err := w.Fork(ctx, fmt.Sprintf("fork%d", step), forkspace.ForkOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ws = append(ws, f)
		}
	}
	want := map[string]forkspace.Info{}
	for _, w := range ws {
		info, err := w.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		info.ExclusiveBytes, info.SharedBytes = 0, 0 // Info only
		want[info.Name] = info
	}
	check := func(when string, st *forkspace.Store) {
		t.Helper()
		infos, err := st.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(infos) != len(want) {
			t.Fatalf("%s: List has %d workspaces, want %d", when, len(infos), len(want))
		}
		for _, got := range infos {
			if got != want[got.Name] {
				t.Errorf("%s: List reports %+v, the workspace %+v", when, got, want[got.Name])
			}
		}
	}
	check("open", st)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = openStore(t, dir)
	check("reopened", st)
}
