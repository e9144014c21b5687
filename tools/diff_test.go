package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/tools"
	"github.com/forkspace/forkspace/vfs"
	"github.com/forkspace/forkspace/vfs/vfstest"
)

// TestDiffStructuredApplies: the diff tool's structured result matches its
// output schema, and its changes, applied in order to a fork of the
// checkpoint (vfs.ApplyDiff), yield the current state, for changes that
// need the order: a swap, a directory renamed over another, replaced
// entries, hard links, modes and extended attributes.
func TestDiffStructuredApplies(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, tools.Options{})
	w := e.ws.(interface{ Store() *forkspace.Workspace }).Store()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.MkdirAll(ctx, "b", 0o755))
	must(w.Symlink(ctx, "x", "b/c"))
	must(w.MkdirAll(ctx, "c/c", 0o755))
	must(w.WriteFile(ctx, "x", []byte("x\n"), 0o644))
	must(w.WriteFile(ctx, "y", []byte("y\n"), 0o644))
	must(w.Symlink(ctx, "x", "l"))
	e.ok("checkpoint", M{"label": "before"})

	must(w.Remove(ctx, "c/c"))
	must(w.Rename(ctx, "b", "c"))
	must(w.Rename(ctx, "x", "t"))
	must(w.Rename(ctx, "y", "x"))
	must(w.Rename(ctx, "t", "y"))
	must(w.Remove(ctx, "l"))
	must(w.Symlink(ctx, "y", "l"))
	must(w.Link(ctx, "x", "c/x"))
	must(w.Chmod(ctx, "y", 0o600))
	must(w.Setxattr(ctx, "c", "user.k", []byte("v")))
	e.ok("write", M{"path": "x", "content": "rewritten\n"})

	tl, _ := e.set.Tool("diff")
	if tl.OutputSchema == nil {
		t.Fatal("diff has no output schema")
	}
	res := e.call("diff", M{"from": "before"})
	if res.IsError {
		t.Fatalf("diff: %s", res.Text)
	}
	data, err := json.Marshal(res.Structured)
	must(err)
	var instance any
	must(json.Unmarshal(data, &instance))
	resolved, err := tl.OutputSchema.Resolve(&jsonschema.ResolveOptions{})
	must(err)
	if err := resolved.Validate(instance); err != nil {
		t.Fatalf("structured result does not match the output schema: %v\n%s", err, data)
	}
	var out struct {
		From    string
		Changes []provider.DiffEntry
	}
	must(json.Unmarshal(data, &out))
	if out.From != "before" || len(out.Changes) == 0 {
		t.Fatalf("structured result: %s", data)
	}
	changes := make([]vfs.Change, len(out.Changes))
	for i, d := range out.Changes {
		must(changes[i].Op.UnmarshalText([]byte(d.Op)))
		changes[i].Path, changes[i].OldPath, changes[i].Type = d.Path, d.OldPath, d.Type
		changes[i].Link, changes[i].Replaced = d.Link, d.Replaced
	}
	applied, err := w.Fork(ctx, "applied", forkspace.ForkOptions{Checkpoint: "before"})
	must(err)
	if err := vfs.ApplyDiff(ctx, applied.FS, w.FS, changes); err != nil {
		t.Fatalf("apply: %v\n%s", err, res.Text)
	}
	if d := vfstest.StateDiff(vfstest.State(t, applied.FS), vfstest.State(t, w.FS)); d != "" {
		t.Fatalf("applied diff differs from the current state: %s\n%s", d, res.Text)
	}
}
