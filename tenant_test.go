package forkspace_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/vfs"
)

// TestTenants: a name is unique per tenant, and nothing a context of one
// tenant does — lookup by name or ID, list, fork, diff, merge, delete —
// reaches a workspace of another (fs.ErrNotExist, as for a missing one).
func TestTenants(t *testing.T) {
	ctx := context.Background()
	st, err := openPass(t, forkspace.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	acme := forkspace.WithTenant(ctx, "acme")
	mine := mustCreate(t, st, "shared-name")
	write(t, mine, "f", "default's")
	theirs, err := st.Create(acme, "shared-name", forkspace.CreateOptions{})
	if err != nil {
		t.Fatalf("the same name in another tenant: %v", err)
	}
	if err := theirs.WriteFile(acme, "f", []byte("acme's"), 0o644); err != nil {
		t.Fatal(err)
	}
	if theirs.Tenant() != "acme" || mine.Tenant() != "default" || theirs.ID() == mine.ID() {
		t.Fatalf("tenants %q %q, IDs %s %s", theirs.Tenant(), mine.Tenant(), theirs.ID(), mine.ID())
	}
	if _, err := st.Create(acme, "shared-name", forkspace.CreateOptions{}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a taken name in the tenant: %v, want fs.ErrExist", err)
	}
	got, err := st.Workspace(acme, "shared-name")
	if err != nil || got.ID() != theirs.ID() {
		t.Fatalf("lookup by name in acme: %v, %v", got, err)
	}
	if b, err := got.ReadFile(acme, "f"); err != nil || string(b) != "acme's" {
		t.Errorf("acme reads %q, %v", b, err)
	}
	// IDs of another tenant's workspace are missing.
	notExist := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			t.Errorf("%s: %v, want fs.ErrNotExist", what, err)
		}
	}
	_, err = st.Workspace(acme, mine.ID())
	notExist("acme looks up default's ID", err)
	_, err = st.Workspace(ctx, theirs.ID())
	notExist("default looks up acme's ID", err)
	_, err = st.Diff(acme, theirs.ID(), mine.ID(), vfs.DiffOptions{})
	notExist("acme diffs against default's ID", err)
	_, err = st.Snapshot(acme, mine.ID())
	notExist("acme snapshots default's ID", err)
	_, err = st.Parent(acme, mine.ID())
	notExist("acme asks the parent of default's ID", err)
	_, err = theirs.Merge(acme, mine.ID(), forkspace.MergeOptions{})
	notExist("acme merges default's ID", err)
	notExist("acme deletes default's ID", st.Delete(acme, mine.ID()))
	// Listings stay in the tenant.
	for _, c := range []struct {
		ctx  context.Context
		want string
	}{{ctx, mine.ID()}, {acme, theirs.ID()}} {
		infos, err := st.List(c.ctx)
		if err != nil || len(infos) != 1 || infos[0].ID != c.want {
			t.Errorf("List of %s = %+v, %v", forkspace.TenantFrom(c.ctx), infos, err)
		}
	}
	// A fork stays in its source's tenant.
	f, err := theirs.Fork(acme, "fork", forkspace.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f.Tenant() != "acme" {
		t.Errorf("fork's tenant %q", f.Tenant())
	}
	_, err = st.Workspace(ctx, "fork")
	notExist("default looks up acme's fork", err)
	if err := st.Delete(acme, theirs.ID()); err != nil {
		t.Fatal(err)
	}
	if b, err := mine.ReadFile(ctx, "f"); err != nil || string(b) != "default's" {
		t.Errorf("default's workspace after acme's delete: %q, %v", b, err)
	}
}

// TestOpenWorkspaceLookup: a workspace already open is found by name and
// ID without reading the catalog, in its own tenant only, and a deleted
// one is gone at once: its name, reused, names the new workspace.
func TestOpenWorkspaceLookup(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	acme := forkspace.WithTenant(ctx, "acme")
	old := mustCreate(t, st, "w")
	for _, ref := range []string{"w", old.ID()} {
		if got, err := st.Workspace(ctx, ref); err != nil || got != old {
			t.Errorf("lookup %s: %v, %v; want the open workspace", ref, got, err)
		}
		if _, err := st.Workspace(acme, ref); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("lookup %s from another tenant: %v, want fs.ErrNotExist", ref, err)
		}
	}
	if err := st.Delete(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"w", old.ID()} {
		if _, err := st.Workspace(ctx, ref); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("lookup %s after delete: %v, want fs.ErrNotExist", ref, err)
		}
	}
	renewed := mustCreate(t, st, "w")
	if got, err := st.Workspace(ctx, "w"); err != nil || got.ID() != renewed.ID() {
		t.Errorf("lookup of the reused name: %v, %v; want %s", got, err, renewed.ID())
	}
}
