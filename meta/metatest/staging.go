package metatest

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"slices"
	"testing"

	"github.com/forkspace/forkspace/meta"
	"pgregory.net/rapid"
)

func testStaging(t *testing.T, s meta.Store) {
	createWorkspaces(t, s, "w", "v")
	w, v := workspace("w").ID, workspace("v").ID
	update(t, s, func(tx meta.Tx) error {
		if err := tx.PutStaged(w, []meta.Staged{
			{Key: []byte("b"), Value: []byte("1"), Seq: 1},
			{Key: []byte("\xff"), Value: []byte("2"), Seq: 2},
			{Key: []byte("a\x00"), Value: []byte("3"), Seq: 3},
			{Key: []byte("a"), Deleted: true, Seq: 4},
			{Key: []byte("\x00"), Value: []byte{}, Seq: 5},
		}); err != nil {
			return err
		}
		return tx.PutStaged(v, []meta.Staged{{Key: []byte("b"), Value: []byte("other"), Seq: 1}})
	})
	checkStaged(t, s, w, []meta.Staged{
		{Key: []byte("\x00"), Seq: 5},
		{Key: []byte("a"), Deleted: true, Seq: 4},
		{Key: []byte("a\x00"), Value: []byte("3"), Seq: 3},
		{Key: []byte("b"), Value: []byte("1"), Seq: 1},
		{Key: []byte("\xff"), Value: []byte("2"), Seq: 2},
	})

	// Upsert: a tombstone replaces a value, a value replaces a tombstone.
	update(t, s, func(tx meta.Tx) error {
		return tx.PutStaged(w, []meta.Staged{
			{Key: []byte("b"), Deleted: true, Seq: 6},
			{Key: []byte("a"), Value: []byte("back"), Seq: 7},
		})
	})
	// A fold that applied seq <= 5 keeps the rows rewritten after it.
	update(t, s, func(tx meta.Tx) error { return tx.DeleteStaged(w, 5) })
	checkStaged(t, s, w, []meta.Staged{
		{Key: []byte("a"), Value: []byte("back"), Seq: 7},
		{Key: []byte("b"), Deleted: true, Seq: 6},
	})
	checkStaged(t, s, v, []meta.Staged{{Key: []byte("b"), Value: []byte("other"), Seq: 1}})
	update(t, s, func(tx meta.Tx) error { return tx.DeleteStaged(w, 7) })
	checkStaged(t, s, w, nil)
	checkStaged(t, s, "id-missing", nil)
	update(t, s, func(tx meta.Tx) error { return tx.DeleteStaged("id-missing", 100) })

	err := s.Update(context.Background(), func(tx meta.Tx) error {
		return tx.PutStaged("id-missing", []meta.Staged{{Key: []byte("k"), Seq: 1}})
	})
	wantErr(t, "PutStaged to a missing workspace", err, fs.ErrNotExist)

	// Many rows in one call, keys repeating: the last row of a key wins.
	var many, want []meta.Staged
	for i := range 300 {
		many = append(many, meta.Staged{Key: fmt.Appendf(nil, "k%03d", i%137), Value: fmt.Appendf(nil, "v%d", i), Seq: int64(i)})
	}
	for i := 300 - 137; i < 300; i++ {
		want = append(want, many[i])
	}
	slices.SortFunc(want, func(a, b meta.Staged) int { return bytes.Compare(a.Key, b.Key) })
	update(t, s, func(tx meta.Tx) error { return tx.PutStaged(w, many) })
	checkStaged(t, s, w, want)
}

// checkStaged compares a workspace's staging rows with want (an empty
// Value equals nil).
func checkStaged(t testing.TB, s meta.Store, workspaceID string, want []meta.Staged) {
	t.Helper()
	var got []meta.Staged
	view(t, s, func(tx meta.Tx) (err error) {
		got, err = tx.Staged(workspaceID)
		return err
	})
	if d := diffStaged(got, want); d != "" {
		t.Errorf("Staged(%q): %s", workspaceID, d)
	}
}

func diffStaged(got, want []meta.Staged) string {
	if len(got) == len(want) && slices.EqualFunc(got, want, func(a, b meta.Staged) bool {
		return bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value) && a.Deleted == b.Deleted && a.Seq == b.Seq
	}) {
		return ""
	}
	return fmt.Sprintf("\n got %s\nwant %s", fmtStaged(got), fmtStaged(want))
}

func fmtStaged(rows []meta.Staged) string {
	var b bytes.Buffer
	for _, r := range rows {
		fmt.Fprintf(&b, "{%q=%q del=%v seq=%d} ", r.Key, r.Value, r.Deleted, r.Seq)
	}
	return b.String()
}

// testStagingModel checks random sequences of PutStaged and DeleteStaged
// against a map, one fresh workspace per run.
func testStagingModel(t *testing.T, s meta.Store) {
	runs := 0
	rapid.Check(t, func(rt *rapid.T) {
		runs++
		ws := fmt.Sprintf("id-model-%d", runs)
		if err := s.Update(context.Background(), func(tx meta.Tx) error {
			return tx.CreateWorkspace(&meta.Workspace{ID: ws, Name: ws})
		}); err != nil {
			rt.Fatalf("create workspace: %v", err)
		}
		model := map[string]meta.Staged{}
		seq := int64(0)
		keyGen := rapid.SampledFrom([]string{"", "a", "a\x00", "ab", "b", "\xff", "zz"})
		for step := range rapid.IntRange(1, 30).Draw(rt, "steps") {
			if rapid.IntRange(0, 4).Draw(rt, "op") == 0 {
				maxSeq := rapid.Int64Range(0, seq+1).Draw(rt, "maxSeq")
				if err := s.Update(context.Background(), func(tx meta.Tx) error { return tx.DeleteStaged(ws, maxSeq) }); err != nil {
					rt.Fatalf("step %d: DeleteStaged: %v", step, err)
				}
				for k, r := range model {
					if r.Seq <= maxSeq {
						delete(model, k)
					}
				}
				continue
			}
			var rows []meta.Staged
			for range rapid.IntRange(1, 4).Draw(rt, "rows") {
				seq++
				k := keyGen.Draw(rt, "key")
				r := meta.Staged{Key: []byte(k), Seq: seq, Deleted: rapid.Bool().Draw(rt, "deleted")}
				if !r.Deleted {
					r.Value = []byte(rapid.StringN(0, 8, -1).Draw(rt, "value"))
				}
				rows = append(rows, r)
				model[k] = r
			}
			if err := s.Update(context.Background(), func(tx meta.Tx) error { return tx.PutStaged(ws, rows) }); err != nil {
				rt.Fatalf("step %d: PutStaged: %v", step, err)
			}
		}
		keys := make([]string, 0, len(model))
		for k := range model {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		want := make([]meta.Staged, 0, len(keys))
		for _, k := range keys {
			want = append(want, model[k])
		}
		var got []meta.Staged
		if err := s.View(context.Background(), func(tx meta.Tx) (err error) {
			got, err = tx.Staged(ws)
			return err
		}); err != nil {
			rt.Fatalf("Staged: %v", err)
		}
		if d := diffStaged(got, want); d != "" {
			rt.Fatalf("Staged differs from the model: %s", d)
		}
		// StagedKey sees the same row for each key, among every
		// workspace's rows (earlier runs' included), in ID order.
		for _, k := range []string{"", "a", "a\x00", "ab", "b", "\xff", "zz", "missing"} {
			var got []meta.Staged
			prev := ""
			if err := s.View(context.Background(), func(tx meta.Tx) error {
				return tx.StagedKey([]byte(k), func(id string, r meta.Staged) error {
					if id <= prev {
						return fmt.Errorf("workspace %q after %q", id, prev)
					}
					prev = id
					if id == ws {
						got = append(got, r)
					}
					return nil
				})
			}); err != nil {
				rt.Fatalf("StagedKey(%q): %v", k, err)
			}
			var want []meta.Staged
			if r, ok := model[k]; ok {
				want = []meta.Staged{r}
			}
			if d := diffStaged(got, want); d != "" {
				rt.Fatalf("StagedKey(%q) differs from the model: %s", k, d)
			}
		}
	})
}
