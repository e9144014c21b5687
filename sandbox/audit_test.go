package sandbox

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/internal/sandboxtest"
	"github.com/forkspace/forkspace/provider"
)

func TestAuditAndRewind(t *testing.T) {
	needBwrap(t)
	st, ws := newWorkspace(t)
	s := New(ws, Options{Mode: ModeCopy, WorkDir: sandboxtest.WorkDir(t), Audit: st.AuditLog(), AutoCheckpoint: true})
	writeWS(t, ws, "keep.txt", "precious", 0o644)
	ctx := audit.WithActor(context.Background(), audit.Actor{Name: "agent", Session: "s-1"})
	req := provider.ExecRequest{Command: "rm keep.txt; echo oops > new.txt; exit 2", Env: map[string]string{"TOKEN": "secret-value"}}
	res, err := s.Exec(ctx, req)
	if err != nil || res.ExitCode != 2 {
		t.Fatalf("Exec = %+v, %v", res, err)
	}
	if _, err := s.Exec(ctx, provider.ExecRequest{Command: "true"}); err != nil {
		t.Fatal(err)
	}
	entries, err := execEntries(ctx, st, ws.ID())
	if err != nil || len(entries) != 2 {
		t.Fatalf("audit entries = %v, %v", entries, err)
	}
	e := entries[1]
	digest, _ := audit.Digest(req)
	if e.Tool != "exec" || e.Actor != "agent" || e.Session != "s-1" || e.ArgsDigest != digest ||
		e.Error != "exit status 2" || !slices.Equal(e.Changed, []string{"keep.txt", "new.txt"}) || e.Checkpoint == "" || e.Duration <= 0 {
		t.Errorf("entry = %+v", e)
	}
	if strings.Contains(e.ArgsDigest, "secret") {
		t.Error("arguments stored raw")
	}
	if entries[0].Checkpoint != "" || entries[0].Error != "" {
		t.Errorf("a run that changed nothing: %+v", entries[0])
	}
	// The automatic checkpoint rewinds what the command did.
	cps, err := ws.Checkpoints(ctx)
	if err != nil || len(cps) != 1 || cps[0].ID != e.Checkpoint || cps[0].Label != "exec: "+req.Command {
		t.Fatalf("checkpoints = %v, %v", cps, err)
	}
	if err := ws.Restore(ctx, e.Checkpoint); err != nil {
		t.Fatal(err)
	}
	if got, _ := readWS(t, ws, "keep.txt"); got != "precious" {
		t.Errorf("after restore keep.txt = %q", got)
	}
	if res := mustExec(t, s, "ls"); res.Stdout != "keep.txt\n" {
		t.Errorf("the next run after a restore sees %q", res.Stdout)
	}
}

// execEntries returns the exec entries of workspace id's audit log,
// newest first (the log also has the setup's writes, as library.write).
func execEntries(ctx context.Context, st *forkspace.Store, id string) ([]audit.Entry, error) {
	es, err := st.AuditLog().Entries(ctx, audit.Filter{WorkspaceID: id})
	return slices.DeleteFunc(es, func(e audit.Entry) bool { return e.Tool != "exec" }), err
}
