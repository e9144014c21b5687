package fusefs_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/forkspace/forkspace/fusefs"
	"github.com/forkspace/forkspace/meta"
)

// TestCheckpointDirs: .forkspace/checkpoints/<label>/ shows every
// checkpoint read-only (EROFS), including ones taken after mounting,
// while .forkspace stays out of the root's listing; a workspace entry of
// that name wins over it.
func TestCheckpointDirs(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	w := create(t, st, "w", meta.Quota{})
	ok(t, w.WriteFile(ctx, "f", []byte("v1"), 0o644))
	_, err := w.Checkpoint(ctx, "one")
	ok(t, err)
	dir := mount(t, w.FS, fusefs.Options{Checkpoints: fusefs.WorkspaceCheckpoints{W: w}})
	ok(t, os.WriteFile(filepath.Join(dir, "f"), []byte("v2"), 0o644))
	_, err = w.Checkpoint(ctx, "two")
	ok(t, err)
	ok(t, w.WriteFile(ctx, "f", []byte("v3"), 0o644))

	cps := filepath.Join(dir, fusefs.MetaDir, "checkpoints")
	for label, want := range map[string]string{"one": "v1", "two": "v2"} {
		if got := readMount(t, cps, label+"/f"); got != want {
			t.Errorf("checkpoint %s reads %q, want %q", label, got, want)
		}
	}
	if got := readMount(t, dir, "f"); got != "v3" {
		t.Errorf("live f reads %q", got)
	}
	ents, err := os.ReadDir(cps)
	ok(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"one", "two"}) {
		t.Errorf("checkpoints listed: %v", names)
	}
	root, err := os.ReadDir(dir)
	ok(t, err)
	for _, e := range root {
		if e.Name() == fusefs.MetaDir {
			t.Errorf("the root lists %s", fusefs.MetaDir)
		}
	}
	isErrno(t, os.WriteFile(filepath.Join(cps, "one/f"), nil, 0o644), syscall.EROFS)
	isErrno(t, os.Mkdir(filepath.Join(cps, "one/d"), 0o755), syscall.EROFS)
	if _, err := os.Stat(filepath.Join(cps, "nope")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing checkpoint: %v", err)
	}

	ok(t, w.MkdirAll(ctx, fusefs.MetaDir+"/mine", 0o755))
	if _, err := os.Stat(filepath.Join(dir, fusefs.MetaDir, "mine")); err != nil {
		t.Errorf("the workspace's own %s: %v", fusefs.MetaDir, err)
	}
}
