package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/internal/sandboxtest"
)

// TestDeleteRemovesWorkDir: deleting a workspace removes the host work dir
// exec used for it (and its state directory); its fork's stays.
func TestDeleteRemovesWorkDir(t *testing.T) {
	tmp := sandboxtest.Dir(t)
	t.Setenv("TMPDIR", tmp) // the binary's default work dirs
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	c.ok(nil, "-w", "w", "exec", "--", "echo x > f")
	c.ok(nil, "workspace", "fork", "w", "w2")
	c.ok(nil, "-w", "w2", "exec", "--", "true")
	workDir := func(name string) string {
		var info forkspace.Info
		c.json(&info, "workspace", "info", name)
		return filepath.Join(tmp, fmt.Sprintf("forkspace-sandbox-%d", os.Getuid()), info.ID)
	}
	dir, forkDir := workDir("w"), workDir("w2")
	// A run on the FUSE mount (the default here) leaves its work dir
	// empty, with its state directory beside it.
	for _, p := range []string{dir, dir + ".state"} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("after exec: %v", err)
		}
	}
	c.ok(nil, "workspace", "delete", "w")
	for _, p := range []string{dir, dir + ".state"} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s after delete: %v, want it removed", p, err)
		}
	}
	if _, err := os.Stat(forkDir + ".state"); err != nil {
		t.Errorf("the fork's work dir after deleting its parent: %v", err)
	}
	c.ok(nil, "gc")
	if _, err := os.Stat(forkDir + ".state"); err != nil {
		t.Errorf("the fork's work dir (in use) after gc: %v", err)
	}
}
