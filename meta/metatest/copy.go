package metatest

import (
	"context"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/forkspace/forkspace/meta"
)

// RunCopy checks the drivers' meta.CopyTx, each test on a store of its
// own.
func RunCopy(t *testing.T, open Opener) {
	t.Run("Copy", func(t *testing.T) { testCopy(t, open(t)) })
}

// copyTx returns tx's copy methods, failing the test without them.
func copyTx(t testing.TB, tx meta.Tx) meta.CopyTx {
	t.Helper()
	c, err := meta.CopyOf(tx)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testCopy checks the writes a store copy makes (meta.CopyTx): each keeps
// the times and sequence numbers it is given, imported states read back
// as given and do not leak into the states recorded after them, and the
// listings return what was written.
func testCopy(t *testing.T, s meta.Store) {
	createWorkspaces(t, s, "a")
	at := func(sec int64) time.Time { return time.Unix(1700000000+sec, 123456000).UTC() }
	rows := func(vals ...string) []meta.Staged {
		var out []meta.Staged
		for i, v := range vals {
			out = append(out, meta.Staged{Key: []byte{byte('k' + i)}, Value: []byte(v), Seq: int64(i + 1)})
		}
		return out
	}
	old := []meta.State{
		{Seq: 5, WorkspaceID: "id-a", Time: at(5), Root: hashOf("r5")},
		{Seq: 7, WorkspaceID: "id-a", Time: at(7), Root: hashOf("r7")},
	}
	oldRows := [][]meta.Staged{rows("five", "5"), rows("seven")}
	head := rows("head", "h2", "h3")
	update(t, s, func(tx meta.Tx) error {
		for i, st := range old {
			if err := copyTx(t, tx).ImportState(st, oldRows[i]); err != nil {
				return err
			}
		}
		wantErr(t, "import an older state", copyTx(t, tx).ImportState(meta.State{Seq: 6, WorkspaceID: "id-a", Time: at(6)}, nil), fs.ErrInvalid)
		wantErr(t, "import a state of a missing workspace", copyTx(t, tx).ImportState(meta.State{Seq: 8, WorkspaceID: "nope", Time: at(8)}, nil), fs.ErrNotExist)
		if err := tx.PutStaged("id-a", head); err != nil {
			return err
		}
		return tx.RecordState(9, "id-a", at(9))
	})
	view(t, s, func(tx meta.Tx) error {
		got, err := copyTx(t, tx).States("id-a")
		if err != nil {
			return err
		}
		if len(got) != 3 || !reflect.DeepEqual(got[:2], old) || got[2].Seq != 9 {
			t.Errorf("States = %+v, want %+v then seq 9", got, old)
		}
		for seq, want := range map[int64][]meta.Staged{5: oldRows[0], 7: oldRows[1], 9: head} {
			got, err := tx.StateStaged(seq)
			if err != nil {
				return err
			}
			if !sameRows(got, want) {
				t.Errorf("StateStaged(%d) = %v, want %v", seq, got, want)
			}
		}
		if st, err := tx.FindState(meta.StateQuery{WorkspaceID: "id-a", Back: 1}); err != nil || st.Seq != 7 {
			t.Errorf("FindState(back 1) = %+v, %v; want the state of seq 7", st, err)
		}
		roots, _, err := tx.HistoryRefs("id-a")
		if err != nil {
			return err
		}
		for _, st := range old {
			if !slices.Contains(roots, st.Root) {
				t.Errorf("HistoryRefs misses the root of imported state %d", st.Seq)
			}
		}
		return nil
	})
	update(t, s, func(tx meta.Tx) error {
		_, err := tx.PruneStates("id-a", 1, time.Time{})
		return err
	})
	view(t, s, func(tx meta.Tx) error {
		if got, err := tx.StateStaged(9); err != nil || !sameRows(got, head) {
			t.Errorf("after pruning the imported states, StateStaged(9) = %v, %v", got, err)
		}
		return nil
	})

	// Checkpoint rows, audit entries, counters, tenants, tokens, refs,
	// conflicts: written with their own times, read back the same.
	entries := []meta.AuditEntry{
		{Seq: 3, Time: at(3), WorkspaceID: "id-a", Tool: "write", Changed: []string{"/x"}, Duration: time.Second},
		{Seq: 8, Time: at(8), Tool: "exec", Detail: "exit 0", Command: "true"},
	}
	tok := meta.Token{ID: "tok", Tenant: "t1", Pattern: "*", Perms: "read", Hash: []byte{1, 2}, CreatedAt: at(1), RevokedAt: at(2), ExpiresAt: at(99)}
	ref := meta.SessionRef{Session: "s", Name: "n", Ref: []byte(`{}`), UpdatedAt: at(4)}
	conflict := meta.Conflict{WorkspaceID: "id-a", Path: "/p", Kind: "content", CreatedAt: at(6)}
	update(t, s, func(tx meta.Tx) error {
		if err := tx.CreateCheckpoint(&meta.Checkpoint{ID: "cp", WorkspaceID: "id-a", CreatedAt: at(1)}); err != nil {
			return err
		}
		if err := copyTx(t, tx).ImportCheckpointStaged("cp", rows("c1", "c2")); err != nil {
			return err
		}
		wantErr(t, "checkpoint rows of a missing checkpoint", copyTx(t, tx).ImportCheckpointStaged("nope", rows("x")), fs.ErrNotExist)
		if err := copyTx(t, tx).ImportAudit(entries); err != nil {
			return err
		}
		wantErr(t, "import an older audit entry", copyTx(t, tx).ImportAudit([]meta.AuditEntry{{Seq: 8, Tool: "x", Time: at(1)}}), fs.ErrInvalid)
		if err := copyTx(t, tx).RaiseCounter(meta.AuditCounter, 9); err != nil {
			return err
		}
		if err := copyTx(t, tx).RaiseCounter(meta.AuditCounter, 2); err != nil {
			return err
		}
		e := meta.AuditEntry{Tool: "after"}
		if err := tx.AppendAudit(&e); err != nil {
			return err
		}
		if e.Seq != 9 {
			t.Errorf("AppendAudit after RaiseCounter(9) got seq %d", e.Seq)
		}
		if err := tx.SetSetting("copy-test", "v"); err != nil {
			return err
		}
		for _, tn := range []meta.Tenant{{Name: meta.DefaultTenant, CreatedAt: at(-1)}, {Name: "t1", CreatedAt: at(-2)}} {
			if err := copyTx(t, tx).ImportTenant(tn); err != nil {
				return err
			}
		}
		if err := copyTx(t, tx).ImportToken(tok); err != nil {
			return err
		}
		if err := copyTx(t, tx).ImportSessionRef(ref); err != nil {
			return err
		}
		return copyTx(t, tx).ImportConflicts([]meta.Conflict{conflict})
	})
	err := s.Update(context.Background(), func(tx meta.Tx) error { return copyTx(t, tx).ImportToken(tok) })
	wantErr(t, "import a token twice", err, fs.ErrExist)
	view(t, s, func(tx meta.Tx) error {
		if got, err := tx.CheckpointStaged("cp"); err != nil || !reflect.DeepEqual(got, rows("c1", "c2")) {
			t.Errorf("CheckpointStaged = %v, %v", got, err)
		}
		got, err := tx.Audit(meta.AuditFilter{Ascending: true})
		if err != nil {
			return err
		}
		if len(got) != 3 {
			t.Fatalf("audit log has %d entries, want 3", len(got))
		}
		for i, want := range entries {
			g := got[i]
			if g.Seq != want.Seq || !g.Time.Equal(want.Time) || g.Tool != want.Tool || fmt.Sprint(g.Changed) != fmt.Sprint(want.Changed) ||
				g.Duration != want.Duration || g.Command != want.Command || g.Detail != want.Detail {
				t.Errorf("audit entry %d = %+v, want %+v", i, g, want)
			}
		}
		counters, err := copyTx(t, tx).Counters()
		if err != nil {
			return err
		}
		if counters[meta.AuditCounter] != 10 {
			t.Errorf("Counters = %v, want audit at 10", counters)
		}
		settings, err := copyTx(t, tx).Settings()
		if err != nil {
			return err
		}
		if settings["copy-test"] != "v" {
			t.Errorf("Settings = %v", settings)
		}
		tenants, err := tx.Tenants()
		if err != nil {
			return err
		}
		if len(tenants) != 2 || !tenants[0].CreatedAt.Equal(at(-1)) || tenants[1].Name != "t1" || !tenants[1].CreatedAt.Equal(at(-2)) {
			t.Errorf("Tenants = %+v", tenants)
		}
		k, err := tx.Token("tok")
		if err != nil {
			return err
		}
		if !k.CreatedAt.Equal(tok.CreatedAt) || !k.RevokedAt.Equal(tok.RevokedAt) || !k.ExpiresAt.Equal(tok.ExpiresAt) {
			t.Errorf("Token = %+v, want the times of %+v", k, tok)
		}
		refs, err := copyTx(t, tx).SessionRefsAll()
		if err != nil {
			return err
		}
		if len(refs) != 1 || !refs[0].UpdatedAt.Equal(ref.UpdatedAt) || string(refs[0].Ref) != "{}" {
			t.Errorf("SessionRefsAll = %+v", refs)
		}
		cs, err := tx.Conflicts("id-a")
		if err != nil {
			return err
		}
		if len(cs) != 1 || !cs[0].CreatedAt.Equal(conflict.CreatedAt) {
			t.Errorf("Conflicts = %+v", cs)
		}
		return nil
	})
}
