package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/internal/sandboxtest"
	"github.com/forkspace/forkspace/provider"
)

// needBwrap fails the test when bubblewrap is missing: the sandbox cannot
// be tested without it (scripts/test.sh installs it).
func needBwrap(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Fatalf("bubblewrap is required (Debian package bubblewrap; scripts/test.sh installs it): %v", err)
	}
}

// newWorkspace opens a store in a temporary directory and creates a
// workspace in it.
func newWorkspace(t testing.TB) (*forkspace.Store, *forkspace.Workspace) {
	t.Helper()
	st, err := forkspace.Open(context.Background(), forkspace.Options{Dir: filepath.Join(t.TempDir(), "store")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ws, err := st.Create(context.Background(), "w", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return st, ws
}

// newShell returns a Shell over a fresh workspace with its work dir in
// the test's temporary directory.
// modes are the two ways a run gets /workspace (Options.Mode): what must
// hold in both is tested in each.
var modes = []Mode{ModeCopy, ModeFUSE}

// newShell returns a Shell over a new workspace. Unless opts names a
// mode it materializes (ModeCopy): most tests look at the work dir.
func newShell(t testing.TB, opts Options) (*Shell, *forkspace.Workspace) {
	t.Helper()
	needBwrap(t)
	_, ws := newWorkspace(t)
	if opts.WorkDir == "" {
		opts.WorkDir = sandboxtest.WorkDir(t)
	}
	if opts.Mode == ModeAuto {
		opts.Mode = ModeCopy
	}
	s := New(ws, opts)
	t.Cleanup(func() { s.Close() })
	return s, ws
}

// mustExec execs command and fails the test on error.
func mustExec(t testing.TB, s *Shell, command string) provider.ExecResult {
	t.Helper()
	res, err := s.Exec(context.Background(), provider.ExecRequest{Command: command})
	if err != nil {
		t.Fatalf("Exec(%q): %v", command, err)
	}
	return res
}

// writeWS writes a workspace file, creating parents.
func writeWS(t testing.TB, ws *forkspace.Workspace, name, data string, perm os.FileMode) {
	t.Helper()
	ctx := context.Background()
	if err := ws.MkdirAll(ctx, filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFile(ctx, name, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
}

// readWS reads a workspace file ("" and false if missing).
func readWS(t testing.TB, ws *forkspace.Workspace, name string) (string, bool) {
	t.Helper()
	b, err := ws.ReadFile(context.Background(), name)
	if err != nil {
		return "", false
	}
	return string(b), true
}
