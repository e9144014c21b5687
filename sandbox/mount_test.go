package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/internal/sandboxtest"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/hostmount"
	"github.com/forkspace/forkspace/provider"
)

// TestExecWithReadOnlyMount runs a command against a workspace with a lazy,
// read-only host-directory mount: the command sees the mounted files
// (stubs are hydrated first), and what it changes under the mount is
// dropped and reported, never recorded nor written to the source.
func TestExecWithReadOnlyMount(t *testing.T) {
	needBwrap(t)
	ctx := context.Background()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "data.txt"), []byte("from the host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, err := hostmount.New(src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: filepath.Join(t.TempDir(), "store")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, err := st.Create(ctx, "w", forkspace.CreateOptions{Mounts: []mount.Spec{{Root: "/mnt", Mount: dir}}})
	if err != nil {
		t.Fatal(err)
	}
	// The default mode materializes a workspace with mounts (hydrated).
	s := New(ws, Options{WorkDir: sandboxtest.WorkDir(t)})
	defer s.Close()
	if _, err := New(ws, Options{WorkDir: sandboxtest.WorkDir(t), Mode: ModeFUSE}).Exec(ctx, provider.ExecRequest{Command: "true"}); !errors.Is(err, ErrNoFUSE) || !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("ModeFUSE with mounts: %v, want ErrNoFUSE", err)
	}

	res := mustExec(t, s, "cat mnt/data.txt; echo changed > mnt/data.txt; echo new > mnt/new.txt; echo kept > out.txt")
	if !strings.Contains(res.Stdout, "from the host") {
		t.Fatalf("the command did not see the mounted file: %q", res.Stdout)
	}
	dropped := map[string]string{}
	for _, c := range res.Dropped {
		dropped[c.Path] = c.Reason
	}
	if dropped["mnt/data.txt"] != reasonReadOnly || dropped["mnt/new.txt"] != reasonReadOnly {
		t.Fatalf("changes under the read-only mount were not dropped: %+v", res.Dropped)
	}
	if got, _ := readWS(t, ws, "mnt/data.txt"); got != "from the host\n" {
		t.Fatalf("workspace copy of the mounted file is %q", got)
	}
	if _, ok := readWS(t, ws, "mnt/new.txt"); ok {
		t.Fatal("a file created under the read-only mount was recorded")
	}
	if got, _ := readWS(t, ws, "out.txt"); got != "kept\n" {
		t.Fatalf("a change outside the mount was not pulled: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(src, "data.txt")); string(b) != "from the host\n" {
		t.Fatalf("the read-only source was written: %q", b)
	}
	if _, err := os.Stat(filepath.Join(src, "new.txt")); err == nil {
		t.Fatal("the read-only source gained a file")
	}
}
