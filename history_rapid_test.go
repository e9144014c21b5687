package forkspace_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/vfs"
)

// stateFiles reads every file (contents), directory ("<dir>") and symbolic
// link ("-> target") of f.
func stateFiles(ctx context.Context, f *vfs.FS) (map[string]string, error) {
	out := map[string]string{}
	err := fs.WalkDir(f.IOFS(ctx), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		switch {
		case d.IsDir():
			out[p] = "<dir>"
		case d.Type()&fs.ModeSymlink != 0:
			target, err := f.Readlink(ctx, p)
			out[p] = "-> " + target
			return err
		default:
			b, err := f.ReadFile(ctx, p)
			out[p] = string(b)
			return err
		}
		return nil
	})
	return out, err
}

// historyModel is what a workspace held after each audited call, by the
// call's audit sequence number.
type historyModel struct {
	now    map[string]string
	states map[int64]map[string]string
	order  []int64 // oldest first
}

// TestHistoryMatchesModel makes random audited calls (writes, removals,
// directories, renames, failing calls, restores to earlier steps, folds,
// a sibling fork's own writes, collections) on a store with a small fold
// threshold, so states span many staging epochs, and checks that every
// recorded step reads back exactly as the model had it, named by
// audit:SEQ, by ~N and by its time, however much happened after it.
func TestHistoryMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		st, err := forkspace.Open(ctx, forkspace.Options{Dir: t.TempDir(), FoldRows: rapid.IntRange(4, 40).Draw(rt, "foldRows")})
		if err != nil {
			rt.Fatal(err)
		}
		defer st.Close()
		if _, err := st.Create(ctx, "w", forkspace.CreateOptions{}); err != nil {
			rt.Fatal(err)
		}
		a, err := st.Audited(ctx, "w", forkspace.AuditOptions{})
		if err != nil {
			rt.Fatal(err)
		}
		m := historyModel{now: map[string]string{}, states: map[int64]map[string]string{}}
		names := []string{"a", "b", "d/x", "d/y", "e"}
		var sibling *forkspace.Workspace
		for range rapid.IntRange(10, 80).Draw(rt, "steps") {
			p := rapid.SampledFrom(names).Draw(rt, "path")
			switch rapid.IntRange(0, 7).Draw(rt, "op") {
			case 0, 1, 2:
				data := rapid.StringMatching(`[a-z]{0,12}`).Draw(rt, "data")
				if a.WriteFile(ctx, p, []byte(data), 0o644) == nil {
					m.now[p] = data
				}
			case 3:
				if a.Remove(ctx, p) == nil {
					delete(m.now, p)
				}
			case 4:
				if a.Mkdir(ctx, "d", 0o755) == nil {
					m.now["d"] = "<dir>"
				}
			case 5:
				to := rapid.SampledFrom(names).Draw(rt, "to")
				if a.Rename(ctx, p, to) == nil {
					old := m.now[p]
					delete(m.now, p)
					m.now[to] = old
				}
			case 6:
				if len(m.order) == 0 {
					continue
				}
				seq := rapid.SampledFrom(m.order).Draw(rt, "restore to")
				if err := a.Restore(ctx, "audit:"+strconv.FormatInt(seq, 10)); err != nil {
					rt.Fatalf("restore to audit:%d: %v", seq, err)
				}
				m.now = maps.Clone(m.states[seq])
			case 7:
				switch rapid.IntRange(0, 2).Draw(rt, "other") {
				case 0:
					if _, err := a.Root(ctx); err != nil { // fold
						rt.Fatal(err)
					}
				case 1:
					if sibling == nil {
						if sibling, err = a.Workspace.Fork(ctx, "sibling", forkspace.ForkOptions{}); err != nil {
							rt.Fatal(err)
						}
					}
					if err := sibling.WriteFile(ctx, "a", []byte("sibling"), 0o644); err != nil {
						rt.Fatal(err)
					}
				case 2:
					if _, err := st.GC(ctx, forkspace.GCOptions{Grace: gc.NoGrace}); err != nil {
						rt.Fatal(err)
					}
				}
				continue
			}
			es, err := st.AuditLog().Entries(ctx, audit.Filter{WorkspaceID: a.ID(), Limit: 1})
			if err != nil || len(es) != 1 || !es[0].State {
				rt.Fatalf("newest entry: %+v, %v", es, err)
			}
			got, err := stateFiles(ctx, a.FS)
			if err != nil {
				rt.Fatal(err)
			}
			if !maps.Equal(got, m.now) {
				rt.Fatalf("head %v, model %v", got, m.now)
			}
			m.states[es[0].Seq] = maps.Clone(m.now)
			m.order = append(m.order, es[0].Seq)
		}
		for i, seq := range m.order {
			back := len(m.order) - 1 - i
			for _, ref := range []string{"w@audit:" + strconv.FormatInt(seq, 10), "w@~" + strconv.Itoa(back)} {
				f, err := st.Snapshot(ctx, ref)
				if err != nil {
					rt.Fatalf("%s: %v", ref, err)
				}
				got, err := stateFiles(ctx, f)
				if err != nil {
					rt.Fatalf("%s: %v", ref, err)
				}
				if !maps.Equal(got, m.states[seq]) {
					rt.Fatalf("%s reads %v, the model had %v", ref, got, m.states[seq])
				}
			}
		}
		if sibling != nil {
			_, err := st.Snapshot(ctx, fmt.Sprintf("sibling@audit:%d", m.order[0]))
			if !errors.Is(err, forkspace.ErrOtherWorkspace) {
				rt.Fatalf("sibling@audit:%d: %v", m.order[0], err)
			}
		}
	})
}
