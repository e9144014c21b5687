package metatest

import (
	"context"
	"io/fs"
	"testing"
	"time"

	"github.com/forkspace/forkspace/meta"
)

func testWorkspaceCreate(t *testing.T, s meta.Store) {
	before := time.Now()
	w := workspace("alpha")
	update(t, s, func(tx meta.Tx) error { return tx.CreateWorkspace(&w) })
	if w.Tenant != meta.DefaultTenant {
		t.Errorf("CreateWorkspace without a tenant set tenant %q, want %q", w.Tenant, meta.DefaultTenant)
	}
	if w.CreatedAt.IsZero() || !w.UpdatedAt.Equal(w.CreatedAt) || !closeTo(w.CreatedAt, before, time.Minute) {
		t.Errorf("CreateWorkspace set CreatedAt %v, UpdatedAt %v; want both the database's now", w.CreatedAt, w.UpdatedAt)
	}
	full := meta.Workspace{
		ID: "id-beta", Name: "beta", Tenant: "acme", Root: hashOf("root"), ParentID: w.ID, OriginCheckpoint: "cp-1",
		Quota:     meta.Quota{MaxBytes: 1 << 30, MaxEntries: 1000},
		CreatedAt: time.Date(2001, 2, 3, 4, 5, 6, 7, time.UTC),
		UpdatedAt: time.Date(2002, 2, 3, 4, 5, 6, 7, time.UTC),
	}
	created := full
	update(t, s, func(tx meta.Tx) error { return tx.CreateWorkspace(&created) })
	if d := sameWorkspace(created, full); d != "" {
		t.Errorf("CreateWorkspace changed given fields: %s", d)
	}
	view(t, s, func(tx meta.Tx) error {
		for _, want := range []meta.Workspace{w, full} {
			got, err := tx.Workspace(want.ID)
			if err != nil {
				t.Errorf("Workspace(%q): %v", want.ID, err)
			} else if d := sameWorkspace(*got, want); d != "" {
				t.Errorf("Workspace(%q): %s", want.ID, d)
			}
			got, err = tx.WorkspaceByName(want.Tenant, want.Name)
			if err != nil {
				t.Errorf("WorkspaceByName(%q): %v", want.Name, err)
			} else if d := sameWorkspace(*got, want); d != "" {
				t.Errorf("WorkspaceByName(%q): %s", want.Name, d)
			}
		}
		_, err := tx.Workspace("id-missing")
		wantErr(t, "Workspace of a missing id", err, fs.ErrNotExist)
		_, err = tx.WorkspaceByName(meta.DefaultTenant, "missing")
		wantErr(t, "WorkspaceByName of a missing name", err, fs.ErrNotExist)
		_, err = tx.WorkspaceByName(meta.DefaultTenant, "beta")
		wantErr(t, "WorkspaceByName of another tenant's name", err, fs.ErrNotExist)
		return nil
	})

	bad := []struct {
		name string
		w    meta.Workspace
		want error
	}{
		{"duplicate name", meta.Workspace{ID: "id-other", Name: "alpha"}, fs.ErrExist},
		{"duplicate name in a tenant", meta.Workspace{ID: "id-other", Name: "beta", Tenant: "acme"}, fs.ErrExist},
		{"duplicate id", meta.Workspace{ID: "id-alpha", Name: "other"}, fs.ErrExist},
		{"empty id", meta.Workspace{Name: "other"}, fs.ErrInvalid},
		{"empty name", meta.Workspace{ID: "id-other"}, fs.ErrInvalid},
	}
	for _, b := range bad {
		err := s.Update(context.Background(), func(tx meta.Tx) error { return tx.CreateWorkspace(&b.w) })
		wantErr(t, "CreateWorkspace with "+b.name, err, b.want)
	}
	view(t, s, func(tx meta.Tx) error {
		ws, err := tx.Workspaces()
		if err != nil || len(ws) != 2 {
			t.Errorf("after failed creates: %d workspaces, %v; want 2", len(ws), err)
		}
		return nil
	})
	// A name is unique per tenant, not per store.
	same := meta.Workspace{ID: "id-beta-2", Name: "beta"}
	update(t, s, func(tx meta.Tx) error { return tx.CreateWorkspace(&same) })
	view(t, s, func(tx meta.Tx) error {
		got, err := tx.WorkspaceByName(meta.DefaultTenant, "beta")
		if err != nil || got.ID != same.ID {
			t.Errorf("WorkspaceByName(default, beta) = %v, %v; want %s", got, err, same.ID)
		}
		got, err = tx.WorkspaceByName("acme", "beta")
		if err != nil || got.ID != full.ID {
			t.Errorf("WorkspaceByName(acme, beta) = %v, %v; want %s", got, err, full.ID)
		}
		return nil
	})
}

func testWorkspaceList(t *testing.T, s meta.Store) {
	view(t, s, func(tx meta.Tx) error {
		ws, err := tx.Workspaces()
		if err != nil || len(ws) != 0 {
			t.Errorf("Workspaces of an empty store = %v, %v", ws, err)
		}
		return nil
	})
	createWorkspaces(t, s, "mango", "apple", "Zebra", "banana", "apple-2", "a")
	want := []string{"Zebra", "a", "apple", "apple-2", "banana", "mango"} // bytewise order
	view(t, s, func(tx meta.Tx) error {
		ws, err := tx.Workspaces()
		if err != nil {
			t.Errorf("Workspaces: %v", err)
			return nil
		}
		var got []string
		for _, w := range ws {
			got = append(got, w.Name)
		}
		if len(got) != len(want) {
			t.Errorf("Workspaces = %q, want %q", got, want)
			return nil
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("Workspaces = %q, want %q", got, want)
				break
			}
		}
		return nil
	})
}

func testWorkspaceUpdate(t *testing.T, s meta.Store) {
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	w := meta.Workspace{ID: "id-w", Name: "w", CreatedAt: old, UpdatedAt: old}
	update(t, s, func(tx meta.Tx) error { return tx.CreateWorkspace(&w) })

	var before time.Time
	update(t, s, func(tx meta.Tx) (err error) {
		before, err = tx.Now()
		return err
	})
	root := hashOf("new root")
	q := meta.Quota{MaxBytes: 5 << 20, MaxEntries: 77}
	update(t, s, func(tx meta.Tx) error {
		if err := tx.SetRoot(w.ID, root); err != nil {
			return err
		}
		return tx.SetQuota(w.ID, q)
	})
	view(t, s, func(tx meta.Tx) error {
		got, err := tx.Workspace(w.ID)
		if err != nil {
			t.Errorf("Workspace: %v", err)
			return nil
		}
		if got.Root != root || got.Quota != q {
			t.Errorf("after SetRoot and SetQuota: root %s quota %+v; want %s %+v", got.Root.Short(), got.Quota, root.Short(), q)
		}
		if !got.CreatedAt.Equal(old) {
			t.Errorf("SetRoot changed CreatedAt to %v", got.CreatedAt)
		}
		if got.UpdatedAt.Before(before) {
			t.Errorf("SetRoot left UpdatedAt at %v, before the database's now %v", got.UpdatedAt, before)
		}
		return nil
	})
	// Back to the empty tree and no quota.
	update(t, s, func(tx meta.Tx) error {
		if err := tx.SetRoot(w.ID, [32]byte{}); err != nil {
			return err
		}
		return tx.SetQuota(w.ID, meta.Quota{})
	})
	view(t, s, func(tx meta.Tx) error {
		got, err := tx.Workspace(w.ID)
		if err != nil || !got.Root.IsZero() || got.Quota != (meta.Quota{}) {
			t.Errorf("after reset: %+v, %v", got, err)
		}
		return nil
	})
	for name, fn := range map[string]func(meta.Tx) error{
		"SetRoot":  func(tx meta.Tx) error { return tx.SetRoot("id-missing", root) },
		"SetQuota": func(tx meta.Tx) error { return tx.SetQuota("id-missing", q) },
	} {
		wantErr(t, name+" of a missing workspace", s.Update(context.Background(), fn), fs.ErrNotExist)
	}
}

func testWorkspaceDelete(t *testing.T, s meta.Store) {
	createWorkspaces(t, s, "doomed", "kept")
	for _, name := range []string{"doomed", "kept"} {
		ws := workspace(name)
		update(t, s, func(tx meta.Tx) error {
			for _, id := range []string{"cp1", "cp2"} {
				if err := tx.CreateCheckpoint(&meta.Checkpoint{ID: name + id, WorkspaceID: ws.ID, Root: hashOf(id)}); err != nil {
					return err
				}
			}
			return tx.PutStaged(ws.ID, []meta.Staged{{Key: []byte("k"), Value: []byte("v"), Seq: 1}})
		})
	}
	doomed, kept := workspace("doomed"), workspace("kept")
	update(t, s, func(tx meta.Tx) error { return tx.DeleteWorkspace(doomed.ID) })
	view(t, s, func(tx meta.Tx) error {
		_, err := tx.Workspace(doomed.ID)
		wantErr(t, "Workspace after delete", err, fs.ErrNotExist)
		_, err = tx.WorkspaceByName(meta.DefaultTenant, doomed.Name)
		wantErr(t, "WorkspaceByName after delete", err, fs.ErrNotExist)
		_, err = tx.Checkpoint("doomedcp1")
		wantErr(t, "Checkpoint of a deleted workspace", err, fs.ErrNotExist)
		if cs, err := tx.Checkpoints(doomed.ID); err != nil || len(cs) != 0 {
			t.Errorf("Checkpoints of a deleted workspace = %v, %v", cs, err)
		}
		if rows, err := tx.Staged(doomed.ID); err != nil || len(rows) != 0 {
			t.Errorf("Staged of a deleted workspace = %v, %v", rows, err)
		}
		if cs, err := tx.Checkpoints(kept.ID); err != nil || len(cs) != 2 {
			t.Errorf("Checkpoints of the other workspace = %v, %v; want 2", cs, err)
		}
		if rows, err := tx.Staged(kept.ID); err != nil || len(rows) != 1 {
			t.Errorf("Staged of the other workspace = %v, %v; want 1", rows, err)
		}
		return nil
	})
	err := s.Update(context.Background(), func(tx meta.Tx) error { return tx.DeleteWorkspace(doomed.ID) })
	wantErr(t, "DeleteWorkspace twice", err, fs.ErrNotExist)
	// The name and ID are free again.
	createWorkspaces(t, s, "doomed")
	view(t, s, func(tx meta.Tx) error {
		if cs, err := tx.Checkpoints(doomed.ID); err != nil || len(cs) != 0 {
			t.Errorf("recreated workspace inherited checkpoints %v, %v", cs, err)
		}
		return nil
	})
}
