package fusefs_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/forkspace/forkspace/fusefs"
	"github.com/forkspace/forkspace/fusefs/fusetest"
	"github.com/forkspace/forkspace/meta"
)

// TestLookupAgainAfterExpiry: once the kernel's cache of a workspace's
// directory under MountAll, or of a checkpoint's under
// .forkspace/checkpoints, expires, its next lookup finds the same
// directory, and everything beneath it stays reachable. (The lookup used
// to attach a new inode that go-fuse then dropped for the one it had, so
// every path under the directory failed with ENOENT from then on.)
func TestLookupAgainAfterExpiry(t *testing.T) {
	fusetest.Require(t)
	ctx := context.Background()
	st := openStore(t)
	w := create(t, st, "w", meta.Quota{})
	ok(t, w.MkdirAll(ctx, "d", 0o755))
	ok(t, w.WriteFile(ctx, "d/f", []byte("v1"), 0o644))
	_, err := w.Checkpoint(ctx, "one")
	ok(t, err)
	const timeout = 50 * time.Millisecond
	dir := mountAll(t, st, fusefs.Options{CacheTimeout: timeout})
	single := mount(t, w.FS, fusefs.Options{CacheTimeout: timeout, Checkpoints: fusefs.WorkspaceCheckpoints{W: w}})
	for _, p := range []string{
		filepath.Join(dir, "w"),
		filepath.Join(single, fusefs.MetaDir, "checkpoints", "one"),
		filepath.Join(dir, "w", fusefs.MetaDir, "checkpoints", "one"),
	} {
		for round := range 3 {
			ents, err := os.ReadDir(p)
			if err != nil || len(ents) != 1 || ents[0].Name() != "d" {
				t.Fatalf("%s, round %d: lists %v, %v", p, round, ents, err)
			}
			if data, err := os.ReadFile(filepath.Join(p, "d/f")); err != nil || string(data) != "v1" {
				t.Fatalf("%s, round %d: d/f reads %q, %v", p, round, data, err)
			}
			time.Sleep(3 * timeout) // the entry and attributes expire
		}
	}
}
