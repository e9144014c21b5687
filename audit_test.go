package forkspace_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
)

func TestAuditedLibraryHandle(t *testing.T) {
	st := openStore(t, t.TempDir())
	ws := mustCreate(t, st, "w")
	ctx := context.Background()
	a, err := st.Audited(ctx, ws.Name(), forkspace.AuditOptions{Actor: audit.Actor{Name: "lib"}, AutoCheckpoint: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.WriteFile(ctx, "f", []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := a.Remove(ctx, "missing"); err == nil {
		t.Fatal("Remove of a missing file succeeded")
	}
	entries, err := st.AuditLog().Entries(ctx, audit.Filter{})
	if err != nil || len(entries) != 2 {
		t.Fatalf("entries = %v, %v", entries, err)
	}
	if e := entries[1]; e.Tool != "library.WriteFile" || e.Actor != "lib" || e.Error != "" || e.Checkpoint == "" || !slices.Equal(e.Changed, []string{"f"}) {
		t.Errorf("WriteFile entry = %+v", e)
	}
	if e := entries[0]; e.Tool != "library.Remove" || !strings.Contains(e.Error, "not exist") {
		t.Errorf("Remove entry = %+v", e)
	}
	if _, err := a.Fork(ctx, "w-fork", forkspace.ForkOptions{}); err != nil {
		t.Fatal(err)
	}
	if latest, err := st.AuditLog().Entries(ctx, audit.Filter{Limit: 1}); err != nil || len(latest) != 1 ||
		latest[0].Tool != "library.Fork" || latest[0].Checkpoint != "" {
		t.Errorf("Fork entry = %+v, %v", latest, err)
	}
	// The automatic checkpoint rewinds the write.
	if err := a.Restore(ctx, entries[1].Checkpoint); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.ReadFile(ctx, "f"); err == nil {
		t.Error("f survived restoring the checkpoint taken before it was written")
	}
}
