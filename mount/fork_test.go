package mount_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/devmount"
	"github.com/forkspace/forkspace/mount/memmount"
	"github.com/forkspace/forkspace/mount/mounttest"
)

// TestFork: a fork inherits the index and every hydrated file (no
// request), calls factories again with its own session, and its copy of a
// read-write mount is local-only; the parent keeps writing back.
func TestFork(t *testing.T) {
	src := newSource(map[string]string{"a": "alpha", "b": "beta"})
	var (
		mu    sync.Mutex
		calls []mount.Context
	)
	factory := func(_ context.Context, mc mount.Context) (mount.Mount, error) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, mc)
		return src, nil
	}
	spec := mount.Spec{Root: "/data", Factory: factory, Options: mount.Options{Mode: mount.ReadWrite, WriteBack: mount.Manual}}
	s := mounttest.NewStore(t)
	parent := s.Create("parent")
	pm := s.Attach(parent, "parent", []mount.Spec{spec}, nil)
	read(t, parent, "data/a")
	if src.lists.Load() != 1 || src.fetches.Load() != 1 {
		t.Fatalf("parent: %d lists %d fetches", src.lists.Load(), src.fetches.Load())
	}
	child := s.Fork(parent, "parent", "child")
	cm := s.Attach(child, "child", []mount.Spec{spec}, nil)
	if read(t, child, "data/a") != "alpha" || src.lists.Load() != 1 || src.fetches.Load() != 1 {
		t.Fatalf("child re-listed or re-fetched: %d lists %d fetches", src.lists.Load(), src.fetches.Load())
	}
	if read(t, child, "data/b") != "beta" || src.fetches.Load() != 2 {
		t.Fatal("the child hydrates a stub it inherited")
	}
	mu.Lock()
	if len(calls) != 2 || calls[0].SessionID != "session-parent" || calls[1].SessionID != "session-child" || calls[1].WorkspaceID != "child" || calls[1].Root != "/data" ||
		calls[0].FS != parent || calls[1].FS != child {
		t.Fatalf("factory calls: %+v", calls)
	}
	mu.Unlock()
	ok(t, child.WriteFile(ctx, "data/a", []byte("child's"), 0o644))
	ok(t, cm.Flush(ctx, ""))
	if got, _ := src.get("a"); got != "alpha" || src.puts.Load() != 0 {
		t.Fatalf("the fork wrote back: %q, %d puts", got, src.puts.Load())
	}
	ok(t, parent.WriteFile(ctx, "data/a", []byte("parent's"), 0o644))
	ok(t, pm.Flush(ctx, ""))
	if got, _ := src.get("a"); got != "parent's" {
		t.Fatalf("the parent's write-back: %q", got)
	}
	if read(t, child, "data/a") != "child's" {
		t.Fatal("the fork saw the parent's write")
	}
}

// TestForkWriteBack: a mount configured with ForkWriteBack writes back
// from forks too.
func TestForkWriteBack(t *testing.T) {
	src := newSource(map[string]string{"a": "alpha"})
	spec := mount.Spec{Root: "/data", Mount: src, Options: mount.Options{Mode: mount.ReadWrite, WriteBack: mount.Manual, ForkWriteBack: true}}
	s := mounttest.NewStore(t)
	parent := s.Create("parent")
	s.Attach(parent, "parent", []mount.Spec{spec}, nil)
	read(t, parent, "data/a")
	child := s.Fork(parent, "parent", "child")
	cm := s.Attach(child, "child", []mount.Spec{spec}, nil)
	ok(t, child.WriteFile(ctx, "data/a", []byte("child's"), 0o644))
	ok(t, cm.Flush(ctx, ""))
	if got, _ := src.get("a"); got != "child's" {
		t.Fatalf("upstream %q", got)
	}
}

// TestVirtual: in-memory and device mounts are served live, listed in
// their parent, shared by reference with forks, and never stored.
func TestVirtual(t *testing.T) {
	tools := memmount.New(map[string][]byte{"hello.sh": []byte("echo hi\n"), "lib/m.py": []byte("x = 1\n")})
	uploads := memmount.New(nil)
	specs := []mount.Spec{
		{Root: "/mnt/tools", Mount: tools},
		{Root: "/mnt/uploads", Mount: uploads, Options: mount.Options{Mode: mount.ReadWrite}},
		{Root: "/dev", Mount: devmount.New(), Options: mount.Options{Mode: mount.ReadWrite}},
	}
	s := mounttest.NewStore(t)
	f := s.Create("ws")
	s.Attach(f, "ws", specs, nil)
	ents, err := f.ReadDir(ctx, "mnt")
	ok(t, err)
	if len(ents) != 2 || ents[0].Name() != "tools" || ents[1].Name() != "uploads" {
		t.Fatalf("ls mnt: %v", ents)
	}
	if read(t, f, "mnt/tools/hello.sh") != "echo hi\n" || len(read(t, f, "dev/urandom")) != devmount.ReadSize {
		t.Fatal("virtual reads")
	}
	if fi, err := f.Stat(ctx, "mnt/tools/lib"); err != nil || !fi.IsDir() || fi.Name() != "lib" {
		t.Fatalf("stat: %v %v", fi, err)
	}
	if err := f.WriteFile(ctx, "mnt/tools/evil.sh", []byte("x"), 0o755); !isReadOnly(err) {
		t.Fatalf("write to a read-only virtual mount: %v", err)
	}
	if err := f.Mkdir(ctx, "mnt/uploads/dir", 0o755); !errors.Is(err, errdefs.ErrReadOnly) {
		t.Fatalf("mkdir in a virtual mount: %v", err)
	}
	ok(t, f.WriteFile(ctx, "dev/null", []byte("discarded"), 0o644))
	ok(t, f.WriteFile(ctx, "mnt/uploads/report.csv", []byte("a,b\n"), 0o644))
	if b, _ := uploads.ReadFile(ctx, "report.csv"); string(b) != "a,b\n" {
		t.Fatalf("provider after write: %q", b)
	}
	usage, err := f.Usage(ctx)
	ok(t, err)
	if usage.Bytes != 0 {
		t.Fatalf("virtual bytes counted in usage: %+v", usage)
	}
	// A fork shares the providers by reference.
	child := s.Fork(f, "ws", "child")
	s.Attach(child, "child", specs, nil)
	if read(t, child, "mnt/uploads/report.csv") != "a,b\n" {
		t.Fatal("the fork does not see the shared provider")
	}
	ok(t, child.Remove(ctx, "mnt/uploads/report.csv"))
	if _, err := f.Stat(ctx, "mnt/uploads/report.csv"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a removal through the fork is not seen by the parent: %v", err)
	}
	// Without the manager the tree holds only the empty mount points.
	bare := s.Fork(f, "ws", "bare")
	ents, err = bare.ReadDir(ctx, "mnt/tools")
	if err != nil || len(ents) != 0 {
		t.Fatalf("stored under a virtual root: %v %v", ents, err)
	}
}

func TestStage(t *testing.T) {
	src := newSource(map[string]string{"skills/pdf/SKILL.md": "# pdf", "skills/pdf/scripts/x.py": "print(1)", "skills/other/SKILL.md": "no"})
	s := mounttest.NewStore(t)
	f := s.Create("ws")
	s.Attach(f, "ws", []mount.Spec{{Root: "/shared", Mount: src}}, nil)
	for _, to := range []string{".agents/skills/pdf", ".claude/skills/pdf"} {
		ok(t, mount.Stage(ctx, f, "shared/skills/pdf", to))
		if read(t, f, to+"/SKILL.md") != "# pdf" || read(t, f, to+"/scripts/x.py") != "print(1)" {
			t.Fatalf("staged %s", to)
		}
	}
	if _, err := f.Stat(ctx, ".agents/skills/other"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("staged a sibling")
	}
	// Staged copies are ordinary files: writable, never written back.
	ok(t, f.WriteFile(ctx, ".agents/skills/pdf/SKILL.md", []byte("edited"), 0o644))
	if got, _ := src.get("skills/pdf/SKILL.md"); got != "# pdf" {
		t.Fatal("a staged copy reached the source")
	}
}

func TestPrefetch(t *testing.T) {
	files := map[string]string{}
	for _, p := range []string{"a", "b", "c/d", "c/e", "f/g/h"} {
		files[p] = "bytes of " + p
	}
	src := newSource(files)
	s := mounttest.NewStore(t)
	f := s.Create("ws")
	m := s.Attach(f, "ws", []mount.Spec{{Root: "/data", Mount: src}, {Root: "/tools", Mount: memmount.New(nil)}}, nil)
	ok(t, m.Prefetch(ctx, ""))
	if src.fetches.Load() != int64(len(files)) {
		t.Fatalf("%d fetches for %d files", src.fetches.Load(), len(files))
	}
	for p, want := range files {
		if read(t, f, "data/"+p) != want {
			t.Fatal(p)
		}
	}
	if src.fetches.Load() != int64(len(files)) {
		t.Fatal("reads after prefetch made requests")
	}
	if err := m.Prefetch(ctx, "/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("prefetch of an unknown root: %v", err)
	}
}

// TestStagePaths: Stage cleans its paths like the CLI does, and refuses
// to copy a tree into itself (it used to recurse until paths overflowed).
func TestStagePaths(t *testing.T) {
	src := newSource(map[string]string{"lazy/pdf/SKILL.md": "# pdf"})
	s := mounttest.NewStore(t)
	f := s.Create("ws")
	m := s.Attach(f, "ws", []mount.Spec{{Root: "/shared", Mount: src}}, nil)
	for _, root := range []string{"/shared", "shared/", "./shared", "/shared/"} {
		ok(t, m.Refresh(ctx, root))
		ok(t, m.Prefetch(ctx, root))
		ok(t, m.Flush(ctx, root))
	}
	for i, from := range []string{"/shared/lazy/pdf", "shared/lazy/pdf/", "./shared/lazy/pdf", "shared//lazy/./pdf"} {
		to := fmt.Sprintf("/out/%d/", i)
		ok(t, mount.Stage(ctx, f, from, to))
		if got := read(t, f, fmt.Sprintf("out/%d/SKILL.md", i)); got != "# pdf" {
			t.Fatalf("stage %s: %q", from, got)
		}
	}
	ok(t, f.MkdirAll(ctx, ".agents", 0o755))
	ok(t, f.WriteFile(ctx, ".agents/x", []byte("x"), 0o644))
	for _, c := range [][2]string{{".agents", ".agents/nested"}, {".agents", ".agents"}, {"/.agents/", "./.agents/a/b"}, {".", "copy"}, {"a", "../b"}} {
		if err := mount.Stage(ctx, f, c[0], c[1]); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Stage(%q, %q): %v, want fs.ErrInvalid", c[0], c[1], err)
		}
	}
	ents, err := f.ReadDir(ctx, ".agents")
	ok(t, err)
	if len(ents) != 1 {
		t.Errorf("a refused stage left %v", ents)
	}
}
