package sandbox

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/provider"
)

// quotaShell is a Shell over a workspace with a byte quota in store dir.
func quotaShell(t *testing.T, dir string, quota int64) (*Shell, *forkspace.Workspace) {
	t.Helper()
	needBwrap(t)
	st, err := forkspace.Open(context.Background(), forkspace.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ws, err := st.Create(context.Background(), "q", forkspace.CreateOptions{Quota: meta.Quota{MaxBytes: quota}})
	if err != nil {
		t.Fatal(err)
	}
	s := New(ws, Options{WorkDir: filepath.Join(t.TempDir(), "work")})
	t.Cleanup(func() { s.Close() })
	return s, ws
}

// refusedWhole checks a result whose pull-back was refused: the command's
// exit code, nothing changed, every path dropped with reason.
func refusedWhole(t *testing.T, res provider.ExecResult, reason string, paths ...string) {
	t.Helper()
	if res.PulledBack || res.PullError == "" || len(res.Changed) != 0 || res.ExitCode != 0 {
		t.Fatalf("refused pull-back reported as pulled %v, error %q, exit %d, changed %v", res.PulledBack, res.PullError, res.ExitCode, res.Changed)
	}
	var got []string
	for _, d := range res.Dropped {
		if reason != "" && d.Reason != reason {
			t.Errorf("%s dropped for %q, want %q", d.Path, d.Reason, reason)
		}
		got = append(got, d.Path)
	}
	slices.Sort(got)
	if !slices.Equal(got, paths) {
		t.Fatalf("dropped %v, want %v", got, paths)
	}
}

// TestPullBackRefusedForQuota is issue 16 item 3: in a workspace with a
// 100,000-byte quota, a command changes keep.txt and writes 120 KB more.
// Nothing lands, keep.txt keeps its content, the result says so with the
// command's exit code, and the next run sees the workspace's state.
func TestPullBackRefusedForQuota(t *testing.T) {
	ctx := context.Background()
	s, ws := quotaShell(t, filepath.Join(t.TempDir(), "store"), 100_000)
	writeWS(t, ws, "keep.txt", "original\n", 0o644)
	res := mustExec(t, s, "echo changed > keep.txt; echo a > a.txt; head -c 60000 /dev/urandom > b.bin; "+
		"head -c 60000 /dev/urandom > c.bin; echo z > z.txt")
	refusedWhole(t, res, reasonQuota, "a.txt", "b.bin", "c.bin", "keep.txt", "z.txt")
	if !strings.Contains(res.PullError, "quota exceeded") {
		t.Errorf("pull error %q", res.PullError)
	}
	if got, _ := readWS(t, ws, "keep.txt"); got != "original\n" {
		t.Fatalf("keep.txt = %q", got)
	}
	info, err := ws.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Entries != 1 || info.Bytes != int64(len("original\n")) {
		t.Fatalf("workspace after a refused pull-back: entries %d, bytes %d", info.Entries, info.Bytes)
	}
	// The work dir went back to the workspace's state.
	res = mustExec(t, s, "cat keep.txt; ls")
	if res.Stdout != "original\nkeep.txt\n" || !res.PulledBack {
		t.Fatalf("next run sees %q (pulled back %v)", res.Stdout, res.PulledBack)
	}
	// Within the quota everything lands.
	res = mustExec(t, s, "echo changed > keep.txt; head -c 60000 /dev/urandom > b.bin")
	if !res.PulledBack || len(res.Changed) != 2 || len(res.Dropped) != 0 {
		t.Fatalf("pull within quota: %+v", res)
	}
	if got, _ := readWS(t, ws, "keep.txt"); got != "changed\n" {
		t.Fatalf("keep.txt = %q", got)
	}
	if b, _ := readWS(t, ws, "b.bin"); len(b) != 60000 || bytes.Count([]byte(b), []byte{0}) == 60000 {
		t.Fatalf("b.bin holds %d bytes", len(b))
	}
}
