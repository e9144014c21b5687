package metatest

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

// testHistory drives staging writes, folds (DeleteStaged), resets, forks
// (CopyStaged) and root changes at random, records a state after each
// step, and checks that every recorded state reads back as the staging
// table and root were when it was recorded, whatever happened after.
func testHistory(t *testing.T, s meta.Store) {
	createWorkspaces(t, s, "a", "b")
	ids := []string{"id-a", "id-b"}
	type want struct {
		ws     string
		root   cas.Hash
		staged []meta.Staged
		at     time.Time
	}
	states := map[int64]want{}
	var order []int64 // seqs in recording order
	rng := rand.New(rand.NewPCG(1, 2))
	var seq int64
	base := time.Unix(1700000000, 0).UTC()
	for step := range 400 {
		ws := ids[rng.IntN(2)]
		update(t, s, func(tx meta.Tx) error {
			switch op := rng.IntN(10); {
			case op < 6:
				var rows []meta.Staged
				for range 1 + rng.IntN(3) {
					seq++
					rows = append(rows, meta.Staged{Key: []byte{byte(rng.IntN(12))}, Value: []byte(fmt.Sprint(step)), Deleted: rng.IntN(5) == 0, Seq: seq})
				}
				return tx.PutStaged(ws, rows)
			case op < 8: // fold some of it
				if err := tx.SetRoot(ws, hashOf(fmt.Sprint("root", step))); err != nil {
					return err
				}
				return tx.DeleteStaged(ws, seq-int64(rng.IntN(3)))
			case op < 9: // reset
				if err := tx.DeleteStaged(ws, 1<<62); err != nil {
					return err
				}
				seq++
				return tx.PutStaged(ws, []meta.Staged{{Key: []byte{99}, Value: []byte("reset"), Seq: seq}})
			default: // the other workspace forks this one's state
				other := ids[0]
				if other == ws {
					other = ids[1]
				}
				w, err := tx.Workspace(ws)
				if err != nil {
					return err
				}
				if err := tx.SetRoot(other, w.Root); err != nil {
					return err
				}
				return tx.CopyStaged(ws, other)
			}
		})
		var w want
		update(t, s, func(tx meta.Tx) error {
			e := meta.AuditEntry{WorkspaceID: ws, Tool: "step", Time: base.Add(time.Duration(step) * time.Second)}
			if err := tx.AppendAudit(&e); err != nil {
				return err
			}
			if err := tx.RecordState(e.Seq, ws, e.Time); err != nil {
				return err
			}
			head, err := tx.Workspace(ws)
			if err != nil {
				return err
			}
			staged, err := tx.Staged(ws)
			w = want{ws: ws, root: head.Root, staged: staged, at: e.Time}
			states[e.Seq] = w
			order = append(order, e.Seq)
			return err
		})
	}
	check := func(seqs []int64) {
		t.Helper()
		view(t, s, func(tx meta.Tx) error {
			for _, q := range seqs {
				w := states[q]
				st, err := tx.FindState(meta.StateQuery{Seq: q})
				if err != nil {
					return err
				}
				if st.WorkspaceID != w.ws || st.Root != w.root || !st.Time.Equal(w.at) {
					t.Errorf("state %d = %+v, want %s root %s at %v", q, st, w.ws, w.root, w.at)
				}
				got, err := tx.StateStaged(q)
				if err != nil {
					return err
				}
				if !sameRows(got, w.staged) {
					t.Errorf("state %d staged %v, want %v", q, got, w.staged)
				}
			}
			return nil
		})
	}
	check(order)

	// Back and AsOf count a workspace's states newest first.
	var ofA []int64
	for i := len(order) - 1; i >= 0; i-- {
		if states[order[i]].ws == "id-a" {
			ofA = append(ofA, order[i])
		}
	}
	view(t, s, func(tx meta.Tx) error {
		for _, back := range []int{0, 1, 7, len(ofA) - 1} {
			st, err := tx.FindState(meta.StateQuery{WorkspaceID: "id-a", Back: back})
			if err != nil || st.Seq != ofA[back] {
				t.Errorf("FindState(a, back %d) = %+v, %v; want seq %d", back, st, err, ofA[back])
			}
		}
		_, err := tx.FindState(meta.StateQuery{WorkspaceID: "id-a", Back: len(ofA)})
		wantErr(t, "FindState past the oldest", err, fs.ErrNotExist)
		w := states[ofA[3]]
		st, err := tx.FindState(meta.StateQuery{WorkspaceID: "id-a", AsOf: w.at.Add(time.Millisecond)})
		if err != nil || st.Seq != ofA[3] {
			t.Errorf("FindState(a, as of %v) = %+v, %v; want seq %d", w.at, st, err, ofA[3])
		}
		_, err = tx.FindState(meta.StateQuery{WorkspaceID: "id-a", AsOf: base.Add(-time.Hour)})
		wantErr(t, "FindState before the first", err, fs.ErrNotExist)
		_, err = tx.FindState(meta.StateQuery{Seq: 1 << 40})
		wantErr(t, "FindState of no entry", err, fs.ErrNotExist)
		roots, rows, err := tx.HistoryRefs("id-a")
		if err != nil {
			return err
		}
		for _, q := range ofA {
			if !slices.Contains(roots, states[q].root) {
				t.Errorf("HistoryRefs misses the root of state %d", q)
			}
			for _, r := range states[q].staged {
				if !slices.ContainsFunc(rows, func(x meta.Staged) bool { return sameRow(x, r) }) {
					t.Errorf("HistoryRefs misses row %v of state %d", r, q)
				}
			}
		}
		es, err := tx.Audit(meta.AuditFilter{Limit: 1})
		if err != nil || len(es) != 1 || !es[0].State {
			t.Errorf("Audit newest = %+v, %v; want State set", es, err)
		}
		return nil
	})

	// Pruning keeps the newest 10 of a, and b's recorded at or after a time;
	// the states kept read back unchanged.
	cut := states[order[len(order)/2]].at
	update(t, s, func(tx meta.Tx) error {
		if _, err := tx.PruneStates("id-a", 10, time.Time{}); err != nil {
			return err
		}
		_, err := tx.PruneStates("id-b", 1<<30, cut)
		return err
	})
	var kept []int64
	for _, q := range order {
		w := states[q]
		keep := (w.ws == "id-a" && slices.Index(ofA, q) < 10) || (w.ws == "id-b" && !w.at.Before(cut))
		if keep {
			kept = append(kept, q)
			continue
		}
		view(t, s, func(tx meta.Tx) error {
			_, err := tx.FindState(meta.StateQuery{Seq: q})
			wantErr(t, fmt.Sprintf("pruned state %d", q), err, fs.ErrNotExist)
			_, err = tx.StateStaged(q)
			wantErr(t, fmt.Sprintf("staged of pruned state %d", q), err, fs.ErrNotExist)
			return nil
		})
	}
	check(kept)

	// A missing workspace records nothing; a deleted one's states go.
	err := s.Update(t.Context(), func(tx meta.Tx) error { return tx.RecordState(1<<40, "id-missing", base) })
	wantErr(t, "RecordState of a missing workspace", err, fs.ErrNotExist)
	update(t, s, func(tx meta.Tx) error { return tx.DeleteWorkspace("id-b") })
	view(t, s, func(tx meta.Tx) error {
		for _, q := range kept {
			_, err := tx.FindState(meta.StateQuery{Seq: q})
			if states[q].ws == "id-b" {
				wantErr(t, "state of a deleted workspace", err, fs.ErrNotExist)
			} else if err != nil {
				t.Errorf("state %d of a: %v", q, err)
			}
		}
		return nil
	})
}

// sameRows compares staging rows by key, value and tombstone (not Seq:
// drivers number logged rows their own way).
func sameRows(a, b []meta.Staged) bool {
	return slices.EqualFunc(a, b, sameRow)
}

func sameRow(a, b meta.Staged) bool {
	return bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value) && a.Deleted == b.Deleted
}

// testPruneCounts checks that the count rule counts every state recorded,
// pruned ones included, and that pruning a workspace of many states drops
// exactly those past the rules: states recorded with times out of order
// (a clock set back) and pruned by age still count as steps.
func testPruneCounts(t *testing.T, s meta.Store) {
	createWorkspaces(t, s, "a")
	base := time.Unix(1700000000, 0).UTC()
	// Seqs 1..6; seq 3 is recorded with an old time (the clock was set
	// back), the rest an hour apart.
	times := map[int64]time.Time{}
	update(t, s, func(tx meta.Tx) error {
		for seq := int64(1); seq <= 6; seq++ {
			times[seq] = base.Add(time.Duration(seq) * time.Hour)
			if seq == 3 {
				times[seq] = base
			}
			if err := tx.RecordState(seq, "id-a", times[seq]); err != nil {
				return err
			}
		}
		return nil
	})
	alive := func() (seqs []int64) {
		view(t, s, func(tx meta.Tx) error {
			for seq := int64(1); seq <= 7; seq++ {
				if _, err := tx.FindState(meta.StateQuery{Seq: seq}); err == nil {
					seqs = append(seqs, seq)
				}
			}
			return nil
		})
		return seqs
	}
	prune := func(keep int, before time.Time) int {
		var n int
		update(t, s, func(tx meta.Tx) (err error) {
			n, err = tx.PruneStates("id-a", keep, before)
			return err
		})
		return n
	}
	// Age drops seq 3 alone.
	if n := prune(100, base.Add(30*time.Minute)); n != 1 || !slices.Equal(alive(), []int64{1, 2, 4, 5, 6}) {
		t.Errorf("prune by age dropped %d, kept %v; want 1, [1 2 4 5 6]", n, alive())
	}
	// The newest 4 steps are 3..6; 3 is gone, so 4, 5, 6 stay.
	if n := prune(4, time.Time{}); n != 2 || !slices.Equal(alive(), []int64{4, 5, 6}) {
		t.Errorf("prune to 4 steps dropped %d, kept %v; want 2, [4 5 6]", n, alive())
	}
	// Pruning again changes nothing; a new state counts from the newest.
	if n := prune(4, time.Time{}); n != 0 {
		t.Errorf("second prune dropped %d states", n)
	}
	update(t, s, func(tx meta.Tx) error { return tx.RecordState(7, "id-a", base.Add(7*time.Hour)) })
	if n := prune(2, time.Time{}); n != 2 || !slices.Equal(alive(), []int64{6, 7}) {
		t.Errorf("prune to 2 steps dropped %d, kept %v; want 2, [6 7]", n, alive())
	}
}
