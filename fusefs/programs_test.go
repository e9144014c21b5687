package fusefs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitOnMount clones a local repository of 300 files into the mount,
// checks it with git fsck, finds it clean with git status, then commits a
// change and reads it back through git log: git's object store (packs
// written and read back through several descriptors, renames, lock
// files) and its index work on a mounted workspace.
func TestGitOnMount(t *testing.T) {
	git := need(t, "git", "git")
	src := t.TempDir()
	for i := range 300 {
		d := filepath.Join(src, fmt.Sprintf("d%02d", i/20))
		ok(t, os.MkdirAll(d, 0o755))
		ok(t, os.WriteFile(filepath.Join(d, fmt.Sprintf("f%03d.txt", i)), []byte(strings.Repeat(fmt.Sprintf("line %d\n", i), 200+i)), 0o644))
	}
	env := []string{"-c", "user.name=t", "-c", "user.email=t@example.com"}
	run(t, src, git, "init", "-q")
	run(t, src, git, "add", "-A")
	run(t, src, git, append(env, "commit", "-q", "-m", "tree")...)

	_, dir := newMount(t)
	run(t, dir, git, "clone", "-q", "file://"+src, "clone")
	clone := filepath.Join(dir, "clone")
	run(t, clone, git, "fsck", "--full", "--strict")
	if out := run(t, clone, git, "status", "--porcelain"); out != "" {
		t.Fatalf("git status of a fresh clone:\n%s", out)
	}
	ok(t, os.WriteFile(filepath.Join(clone, "d00", "f000.txt"), []byte("changed\n"), 0o644))
	if out := run(t, clone, git, "status", "--porcelain"); strings.TrimSpace(out) != "M d00/f000.txt" {
		t.Fatalf("git status after a change = %q", out)
	}
	run(t, clone, git, append(env, "commit", "-q", "-am", "change")...)
	if out := run(t, clone, git, "log", "--format=%s"); out != "change\ntree\n" {
		t.Fatalf("git log = %q", out)
	}
	run(t, clone, git, "gc", "-q")
	run(t, clone, git, "fsck", "--full", "--strict")
}
