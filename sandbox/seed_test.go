package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/internal/sandboxtest"
)

// forkPair returns a parent workspace with 100 files, a symbolic link and a
// file a command wrote (pulled back), its Shell after that run, and a fork
// of it with a Shell of its own; work dirs side by side in a temporary
// directory.
func forkPair(t *testing.T) (ps *Shell, parent *forkspace.Workspace, fs *Shell, fork *forkspace.Workspace) {
	t.Helper()
	needBwrap(t)
	_, parent = newWorkspace(t)
	ctx := context.Background()
	for i := range 100 {
		writeWS(t, parent, fmt.Sprintf("d%d/f%d", i%5, i), fmt.Sprint("file ", i), 0o644)
	}
	if err := parent.Symlink(ctx, "f1", "d1/link"); err != nil {
		t.Fatal(err)
	}
	if err := parent.Chmod(ctx, "d2/f2", 0o700); err != nil {
		t.Fatal(err)
	}
	base := sandboxtest.Dir(t)
	ps = New(parent, Options{Mode: ModeCopy, WorkDir: filepath.Join(base, "parent")})
	t.Cleanup(func() { ps.Close() })
	mustExec(t, ps, "echo by-command > d3/cmd && rm d4/f4")
	fork, err := parent.Fork(ctx, "fork", forkspace.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fs = New(fork, Options{Mode: ModeCopy, WorkDir: filepath.Join(base, "fork")})
	t.Cleanup(func() { fs.Close() })
	return ps, parent, fs, fork
}

// TestForkSeedsFromParent: the first run in a fork copies the parent's
// materialized work dir (no file read from the workspace but what the fork
// and the parent changed since the parent's last run), mirrors the fork
// exactly, and shares no inode with the parent's work dir.
func TestForkSeedsFromParent(t *testing.T) {
	ps, parent, fs, fork := forkPair(t)
	ctx := context.Background()
	// Diverge both ways: the parent after its last run, the fork before
	// its first.
	writeWS(t, parent, "d0/f0", "parent changed", 0o644)
	writeWS(t, fork, "d1/f1", "fork changed", 0o644)
	writeWS(t, fork, "new/file", "fork added", 0o600)
	if err := fork.Remove(ctx, "d2/f7"); err != nil {
		t.Fatal(err)
	}
	if got := mustExec(t, fs, "cat d3/cmd d1/link"); got.Stdout != "by-command\nfork changed" {
		t.Errorf("fork's first run read %q", got.Stdout)
	}
	st := fs.Stats()
	if st.Full || st.Seeded < 100 || st.Written != 2 || st.Removed != 1 {
		t.Errorf("fork's first run: %+v, want seeded from the parent, 2 files written, 1 removed", st)
	}
	sameTree(t, fs, fork)
	separateCopies(t, ps.WorkDir(), fs.WorkDir(), "d1/f1")
	// The parent's pending change is still the parent's.
	mustExec(t, ps, "true")
	if st := ps.Stats(); st.Written != 1 {
		t.Errorf("parent's next run: %+v, want its own change written", st)
	}
	sameTree(t, ps, parent)
}

// TestForkCannotWriteParent: a command in a seeded fork that rewrites,
// appends to, truncates and chmods every file in place leaves the
// parent's work dir and workspace as they were.
func TestForkCannotWriteParent(t *testing.T) {
	ps, parent, fs, fork := forkPair(t)
	before := dumpHost(t, ps.WorkDir(), newMatcher(ps.opts.Ignore))
	res := mustExec(t, fs, `for f in d*/f*; do echo x >> "$f"; chmod 600 "$f"; done; : > d0/f5; echo y > d1/f6`)
	if res.ExitCode != 0 || len(res.Changed) < 90 {
		t.Fatalf("fork's run: exit %d, %d changes, stderr %q", res.ExitCode, len(res.Changed), res.Stderr)
	}
	if fs.Stats().Seeded == 0 {
		t.Fatal("the fork was not seeded from the parent")
	}
	after := dumpHost(t, ps.WorkDir(), newMatcher(ps.opts.Ignore))
	for p, h := range before {
		if after[p] != h {
			t.Errorf("parent's %s: %q became %q", p, h, after[p])
		}
	}
	sameTree(t, ps, parent)
	mustExec(t, ps, "true")
	if st := ps.Stats(); st != (Stats{}) {
		t.Errorf("parent's next run rewrote %+v", st)
	}
	sameTree(t, fs, fork)
}

// TestForkSeedSkipsAlteredParentFiles: a parent work-dir file altered
// behind the manifest's back (as a host user could) is not copied into the
// fork; the fork gets the workspace's bytes.
func TestForkSeedSkipsAlteredParentFiles(t *testing.T) {
	ps, _, fs, fork := forkPair(t)
	if err := os.WriteFile(filepath.Join(ps.WorkDir(), "d0/f10"), []byte("tampered, longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(ps.WorkDir(), "d1/link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(ps.WorkDir(), "d1/link")); err != nil {
		t.Fatal(err)
	}
	mustExec(t, fs, "true")
	if st := fs.Stats(); st.Seeded == 0 || st.Written != 1 || st.Links != 1 {
		t.Errorf("fork's first run: %+v, want seeded with the altered file and link rewritten", st)
	}
	sameTree(t, fs, fork)
}

// TestForkSeedNeedsIdleParent: a fork whose parent's work dir is unknown
// to this process, or in use by another, is materialized from the
// workspace, and right.
func TestForkSeedNeedsIdleParent(t *testing.T) {
	t.Run("parent closed", func(t *testing.T) {
		ps, _, fs, fork := forkPair(t)
		ps.Close()
		mustExec(t, fs, "true")
		if st := fs.Stats(); !st.Full || st.Seeded != 0 {
			t.Errorf("%+v, want a full sync", st)
		}
		sameTree(t, fs, fork)
	})
	t.Run("parent locked by another process", func(t *testing.T) {
		ps, _, fs, fork := forkPair(t)
		f, err := os.Open(filepath.Join(ps.stateDir(), "lock"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		mustExec(t, fs, "true")
		if st := fs.Stats(); !st.Full || st.Seeded != 0 {
			t.Errorf("%+v, want a full sync", st)
		}
		sameTree(t, fs, fork)
	})
}

// separateCopies checks that no regular file of work dir a is the same
// host file as its namesake in b, and that both have the same mtime
// (except the paths in changed).
func separateCopies(t *testing.T, a, b string, changed ...string) {
	t.Helper()
	n := 0
	filepath.WalkDir(a, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		fa, err1 := os.Lstat(p)
		fb, err2 := os.Lstat(filepath.Join(b, rel))
		if err1 != nil || err2 != nil {
			return nil
		}
		n++
		if os.SameFile(fa, fb) {
			t.Errorf("%s: the same host file in both work dirs", rel)
		}
		if !fa.ModTime().Equal(fb.ModTime()) && !slices.Contains(changed, rel) {
			t.Errorf("%s: mtime %v in one work dir, %v in the other", rel, fa.ModTime(), fb.ModTime())
		}
		return nil
	})
	if n == 0 {
		t.Error("no file in common")
	}
}

// TestForkSeedsFromClosedParent: a parent's Shell closed (its process
// gone) leaves its manifest in its state directory, and a fork's first
// run seeds from it; a manifest another run made stale (the token moved)
// or that is unreadable is not used, and the fork materializes everything.
func TestForkSeedsFromClosedParent(t *testing.T) {
	needBwrap(t)
	t.Setenv("TMPDIR", sandboxtest.Dir(t)) // default work dirs, found by ID
	_, parent := newWorkspace(t)
	ctx := context.Background()
	for i := range 60 {
		writeWS(t, parent, fmt.Sprintf("d%d/f%d", i%3, i), fmt.Sprint("file ", i), 0o644)
	}
	ps := New(parent, Options{Mode: ModeCopy})
	t.Cleanup(func() { ps.Discard() })
	mustExec(t, ps, "echo by-command > d1/cmd")
	if err := ps.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ps.Close(); err != nil { // idempotent, and keeps what it saved
		t.Fatal(err)
	}
	firstRun := func(name string) (Stats, *forkspace.Workspace) {
		fork, err := parent.Fork(ctx, name, forkspace.ForkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		writeWS(t, fork, "d0/f0", "fork changed", 0o644)
		fs := New(fork, Options{Mode: ModeCopy})
		t.Cleanup(func() { fs.Discard() })
		if got := mustExec(t, fs, "cat d1/cmd d0/f0"); got.Stdout != "by-command\nfork changed" {
			t.Errorf("%s's first run read %q", name, got.Stdout)
		}
		sameTree(t, fs, fork)
		return fs.Stats(), fork
	}
	if st, _ := firstRun("fork1"); st.Full || st.Seeded < 60 || st.Written != 1 {
		t.Errorf("first run of a fork of a closed parent: %+v, want seeded, 1 file written", st)
	}
	state := ps.stateDir()
	if err := os.WriteFile(filepath.Join(state, "token"), []byte("another process ran"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, _ := firstRun("fork2"); !st.Full || st.Seeded != 0 {
		t.Errorf("first run with a stale saved manifest: %+v, want materialized whole", st)
	}
	saved, err := os.ReadFile(filepath.Join(state, savedFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, savedFile), saved[:len(saved)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := decodeSaved(saved[:len(saved)/2]); !errors.Is(err, errSaved) {
		t.Errorf("decoding half a saved manifest: %v, want errSaved", err)
	}
	if st, _ := firstRun("fork3"); !st.Full || st.Seeded != 0 {
		t.Errorf("first run with a truncated saved manifest: %+v, want materialized whole", st)
	}
}
