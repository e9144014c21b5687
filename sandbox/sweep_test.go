package sandbox

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/internal/sandboxtest"
	"github.com/forkspace/forkspace/provider"
)

// TestSweepIdle: a sweep removes the work dirs (and their state
// directories) unused for longer than the bound, keeps recent ones, ones
// a run holds and anything that is not a work dir; a Shell whose work dir
// was swept rematerializes it on its next run.
func TestSweepIdle(t *testing.T) {
	needBwrap(t)
	st, ws := newWorkspace(t)
	ctx := context.Background()
	writeWS(t, ws, "a/b", "content", 0o644)
	base := sandboxtest.Dir(t)
	shells := map[string]*Shell{}
	for _, name := range []string{"old", "recent", "busy"} {
		s := New(ws, Options{Mode: ModeCopy, WorkDir: filepath.Join(base, name)})
		t.Cleanup(func() { s.Close() })
		mustExec(t, s, "true")
		shells[name] = s
	}
	long := time.Now().Add(-48 * time.Hour)
	for _, name := range []string{"old", "busy"} {
		if err := os.Chtimes(filepath.Join(base, name+".state", "lock"), long, long); err != nil {
			t.Fatal(err)
		}
	}
	// A run holds busy's lock.
	f, err := os.Open(filepath.Join(base, "busy.state", "lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	// Not work dirs: a directory named like a state dir without a lock
	// file, and one whose lock is a symbolic link.
	for _, d := range []string{"other.state", "other", "link.state"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(base, "old.state", "lock"), filepath.Join(base, "link.state", "lock")); err != nil {
		t.Fatal(err)
	}

	removed, err := Sweep(ctx, SweepOptions{Dir: base, Idle: 24 * time.Hour})
	if err != nil || !slices.Equal(removed, []string{"old"}) {
		t.Fatalf("Sweep = %v, %v; want [old]", removed, err)
	}
	for _, p := range []string{"old", "old.state"} {
		if _, err := os.Lstat(filepath.Join(base, p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s after the sweep: %v, want it removed", p, err)
		}
	}
	for _, p := range []string{"recent/a/b", "busy/a/b", "other", "other.state", "link.state"} {
		if _, err := os.Lstat(filepath.Join(base, p)); err != nil {
			t.Errorf("%s after the sweep: %v, want it kept", p, err)
		}
	}
	// Negative Idle never removes by age.
	f.Close()
	if removed, err := Sweep(ctx, SweepOptions{Dir: base, Idle: -1}); err != nil || len(removed) != 0 {
		t.Errorf("Sweep(Idle -1) = %v, %v; want nothing removed", removed, err)
	}

	// The swept Shell starts over.
	if res := mustExec(t, shells["old"], "cat a/b"); res.Stdout != "content" {
		t.Errorf("after the sweep the command read %q", res.Stdout)
	}
	if s := shells["old"].Stats(); !s.Full {
		t.Errorf("run after the sweep: %+v, want a full sync", s)
	}

	// Live: the work dir of a workspace that is gone goes, idle or not.
	other, err := st.Create(ctx, "other-ws", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gone := New(other, Options{Mode: ModeCopy, WorkDir: filepath.Join(base, other.ID())})
	t.Cleanup(func() { gone.Close() })
	mustExec(t, gone, "true")
	if err := st.Delete(ctx, other.ID()); err != nil {
		t.Fatal(err)
	}
	live := func(id string) bool { return id != other.ID() }
	if removed, err := Sweep(ctx, SweepOptions{Dir: base, Idle: -1, Live: live}); err != nil || !slices.Equal(removed, []string{other.ID()}) {
		t.Errorf("Sweep(Live) = %v, %v; want [%s]", removed, err, other.ID())
	}
}

// TestRemoveWorkDir: deleting a workspace's default work dir removes it
// and its state directory; bad IDs are refused and touch nothing.
func TestRemoveWorkDir(t *testing.T) {
	needBwrap(t)
	t.Setenv("TMPDIR", sandboxtest.Dir(t))
	_, ws := newWorkspace(t)
	ctx := context.Background()
	writeWS(t, ws, "f", "x", 0o644)
	s := New(ws, Options{Mode: ModeCopy})
	t.Cleanup(func() { s.Close() })
	mustExec(t, s, "true")
	if filepath.Dir(s.WorkDir()) != defaultBase() {
		t.Fatalf("work dir %s not in the default base", s.WorkDir())
	}
	for _, id := range []string{"", ".", "..", "../x", "a/b"} {
		if err := RemoveWorkDir(ctx, id); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("RemoveWorkDir(%q) = %v, want fs.ErrInvalid", id, err)
		}
	}
	if err := RemoveWorkDir(ctx, ws.ID()); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{s.WorkDir(), s.stateDir()} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want it removed", p, err)
		}
	}
	if err := RemoveWorkDir(ctx, ws.ID()); err != nil {
		t.Errorf("RemoveWorkDir of a removed work dir: %v", err)
	}
	if _, err := os.Lstat(defaultBase()); err != nil {
		t.Errorf("the default base: %v, want it kept", err)
	}
}

// TestExecSweepsIdle: Exec in the default base removes the work dirs idle
// past Options.Idle.
func TestExecSweepsIdle(t *testing.T) {
	needBwrap(t)
	t.Setenv("TMPDIR", sandboxtest.Dir(t))
	st, ws := newWorkspace(t)
	other, err := st.Create(context.Background(), "other", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	idle := New(other, Options{Mode: ModeCopy})
	t.Cleanup(func() { idle.Close() })
	mustExec(t, idle, "true")
	long := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(idle.stateDir(), "lock"), long, long); err != nil {
		t.Fatal(err)
	}
	lastSweep.Lock()
	lastSweep.at = time.Time{} // as in a new process
	lastSweep.Unlock()
	s := New(ws, Options{Mode: ModeCopy, Idle: time.Hour})
	t.Cleanup(func() { s.Close() })
	mustExec(t, s, "true")
	if _, err := os.Lstat(idle.WorkDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("idle work dir after another workspace's run: %v, want it removed", err)
	}
	if _, err := os.Lstat(s.WorkDir()); err != nil {
		t.Errorf("the running workspace's work dir: %v", err)
	}
}

// TestRunWaitingOnRemovedWorkDir: a run waiting for the lock of a work
// dir that is removed meanwhile (RemoveWorkDir, Sweep) starts over in a
// new one instead of failing on the removed state directory.
func TestRunWaitingOnRemovedWorkDir(t *testing.T) {
	s, ws := newShell(t, Options{})
	writeWS(t, ws, "f", "content", 0o644)
	mustExec(t, s, "true")
	held, err := lockFile(s.stateDir(), true) // as a sweep does
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := s.Exec(context.Background(), provider.ExecRequest{Command: "cat f"})
		done <- result{res.Stdout, err}
	}()
	time.Sleep(200 * time.Millisecond) // usually: the run waits on the lock now
	if err := removeWork(s.WorkDir()); err != nil {
		t.Fatal(err)
	}
	held.Close()
	if r := <-done; r.err != nil || r.out != "content" {
		t.Errorf("run after its work dir was removed: %q, %v", r.out, r.err)
	}
	sameTree(t, s, ws)
}

// TestStoreDeleteRemovesWorkDir: a store opened with OnDelete set to
// RemoveWorkDir removes a workspace's default work dir when the library's
// Store.Delete deletes it (every surface deletes through it), and leaves
// the work dir of another workspace alone.
func TestStoreDeleteRemovesWorkDir(t *testing.T) {
	needBwrap(t)
	t.Setenv("TMPDIR", sandboxtest.Dir(t))
	ctx := context.Background()
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: filepath.Join(t.TempDir(), "store"), OnDelete: RemoveWorkDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var shells []*Shell
	for _, name := range []string{"gone", "kept"} {
		ws, err := st.Create(ctx, name, forkspace.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s := New(ws, Options{Mode: ModeCopy})
		t.Cleanup(func() { s.Discard() })
		mustExec(t, s, "echo x > f")
		shells = append(shells, s)
	}
	if err := st.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{shells[0].WorkDir(), shells[0].stateDir()} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s after Store.Delete: %v, want it removed", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(shells[1].WorkDir(), "f")); err != nil {
		t.Errorf("the other workspace's work dir: %v", err)
	}
}
