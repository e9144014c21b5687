package forkspace_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/devmount"
	"github.com/forkspace/forkspace/mount/hostmount"
	"github.com/forkspace/forkspace/mount/memmount"
	"github.com/forkspace/forkspace/transfer"
)

var mountDrivers = mount.Drivers{"file": hostmount.Driver, "dev": devmount.Driver}

// hostMounted opens a store in dir with the built-in mount drivers and
// creates workspace name with host directory host mounted at /host
// (query: the mount URL's options, such as "?mode=rw"). The caller closes
// the store.
func hostMounted(t *testing.T, dir, host, query, name string) (*forkspace.Store, *forkspace.Workspace) {
	t.Helper()
	ctx := context.Background()
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir, MountDrivers: mountDrivers})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := mount.ParseSpec("/host=file://"+host+query, mountDrivers)
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.Create(ctx, name, forkspace.CreateOptions{Mounts: []mount.Spec{spec}})
	if err != nil {
		t.Fatal(err)
	}
	return st, w
}

// TestMounts: a workspace created with a URL mount (persisted) and a code
// mount; reopen rebuilds the URL mount without re-listing; a fork
// inherits the table; the policy answers the sandbox's questions.
func TestMounts(t *testing.T) {
	ctx := context.Background()
	dir, host := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "notes.md"), []byte("host notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir, MountDrivers: mountDrivers})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := mount.ParseSpec("/host=file://"+host+"?mode=rw&writeback=manual", mountDrivers)
	if err != nil {
		t.Fatal(err)
	}
	tools := mount.Spec{Root: "/tools", Mount: memmount.New(map[string][]byte{"run.sh": []byte("echo")})}
	if _, err := st.Create(ctx, "bad", forkspace.CreateOptions{Mounts: []mount.Spec{spec, {Root: "/host/sub", Mount: tools.Mount}}}); !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf("nested roots: %v", err)
	}
	w, err := st.Create(ctx, "ws", forkspace.CreateOptions{Mounts: []mount.Spec{spec, tools}})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := w.ReadFile(ctx, "host/notes.md"); err != nil || string(b) != "host notes" {
		t.Fatalf("read: %q %v", b, err)
	}
	if b, err := w.ReadFile(ctx, "tools/run.sh"); err != nil || string(b) != "echo" {
		t.Fatalf("virtual read: %q %v", b, err)
	}
	if err := w.WriteFile(ctx, "tools/x", []byte("x"), 0o644); !errors.Is(err, errdefs.ErrReadOnly) {
		t.Fatalf("write to read-only tools: %v", err)
	}
	if err := w.WriteFile(ctx, "host/new.md", []byte("from the agent"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ms := w.Mounts(); len(ms) != 2 || ms[0].Root != "/host" || len(ms[0].Pending) != 1 {
		t.Fatalf("mounts: %+v", ms)
	}
	if err := w.Flush(ctx, "/host"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(host, "new.md")); string(b) != "from the agent" {
		t.Fatalf("flushed: %q", b)
	}
	// Virtual mounts are left out of exports, mount points included.
	out := t.TempDir()
	if err := transfer.ExportDir(ctx, w.FS, ".", out, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "tools", "run.sh")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a virtual file was exported: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "host", "notes.md")); err != nil || string(b) != "host notes" {
		t.Fatalf("exported lazy file: %q %v", b, err)
	}
	p := w.MountPolicy()
	if !p.Writable("host/a") || !p.ReadOnly("tools/a") || p.ReadOnly("src/a") {
		t.Fatal("policy")
	}
	child, err := w.Fork(ctx, "child", forkspace.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := child.ReadFile(ctx, "tools/run.sh"); err != nil || string(b) != "echo" {
		t.Fatalf("fork's virtual mount: %q %v", b, err)
	}
	if err := child.WriteFile(ctx, "host/notes.md", []byte("fork edit"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := child.Flush(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(host, "notes.md")); string(b) != "host notes" {
		t.Fatalf("the fork wrote back: %q", b)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopen: the URL mount is rebuilt; the code mount is the host's to pass.
	if err := os.WriteFile(filepath.Join(host, "later.md"), []byte("not listed yet"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err = forkspace.Open(ctx, forkspace.Options{Dir: dir, MountDrivers: mountDrivers})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w, err = st.Workspace(ctx, "ws")
	if err != nil {
		t.Fatal(err)
	}
	if ms := w.Mounts(); len(ms) != 1 || ms[0].Source == "" || ms[0].Options.Mode != mount.ReadWrite {
		t.Fatalf("reopened mounts: %+v", ms)
	}
	if _, err := w.Stat(ctx, "host/later.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("reopen re-listed: %v", err)
	}
	if err := w.Refresh(ctx, "/host"); err != nil {
		t.Fatal(err)
	}
	if err := w.Prefetch(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if b, err := w.ReadFile(ctx, "host/later.md"); err != nil || string(b) != "not listed yet" {
		t.Fatalf("after refresh: %q %v", b, err)
	}
	if err := w.Mount(ctx, tools); err != nil {
		t.Fatal(err)
	}
	if b, err := w.ReadFile(ctx, "tools/run.sh"); err != nil || string(b) != "echo" {
		t.Fatalf("re-passed code mount: %q %v", b, err)
	}
	if err := w.Refresh(ctx, "/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("refresh of an unknown root: %v", err)
	}
}

// TestMountsGC: stubs reference nothing stored and hydrated files are
// ordinary content, so a collection with no grace keeps every byte a
// workspace (or its fork) can read, and the store checks clean.
func TestMountsGC(t *testing.T) {
	ctx := context.Background()
	host := t.TempDir()
	big := make([]byte, 300<<10) // chunked into the blob store
	for i := range big {
		big[i] = byte(i * 7)
	}
	for name, data := range map[string][]byte{"small.txt": []byte("small"), "big.bin": big, "unread.txt": []byte("never read")} {
		if err := os.WriteFile(filepath.Join(host, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, w := hostMounted(t, t.TempDir(), host, "", "ws")
	defer st.Close()
	for _, p := range []string{"host/small.txt", "host/big.bin"} {
		if _, err := w.ReadFile(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	child, err := w.Fork(ctx, "child", forkspace.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.GC(ctx, forkspace.GCOptions{Grace: -1}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*forkspace.Workspace{w, child} {
		b, err := f.ReadFile(ctx, "host/big.bin")
		if err != nil || len(b) != len(big) || b[12345] != big[12345] {
			t.Fatalf("%s: hydrated file after gc: %d bytes, %v", f.Name(), len(b), err)
		}
		if b, err := f.ReadFile(ctx, "host/unread.txt"); err != nil || string(b) != "never read" {
			t.Fatalf("%s: stub after gc: %q %v", f.Name(), b, err)
		}
	}
	rep, err := st.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Clean() {
		t.Fatalf("check after gc: %+v", rep)
	}
}

// TestImportIntoMountedWorkspace: an import (one vfs batch) into a
// reopened workspace whose lazy mount is not indexed yet neither deadlocks
// on the index (which writes stubs through the workspace) nor misses the
// write-back of what it put under the mount.
func TestImportIntoMountedWorkspace(t *testing.T) {
	ctx := context.Background()
	dir, host, src := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "notes.md"), []byte("host notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "a.txt"), []byte("imported"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir, MountDrivers: mountDrivers})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := mount.ParseSpec("/host=file://"+host+"?mode=rw&writeback=manual", mountDrivers)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Create(ctx, "ws", forkspace.CreateOptions{Mounts: []mount.Spec{spec}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = forkspace.Open(ctx, forkspace.Options{Dir: dir, MountDrivers: mountDrivers})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w, err := st.Workspace(ctx, "ws")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- transfer.ImportDir(ctx, w.FS, "host/in", src, transfer.Options{}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("import into a workspace with an unindexed mount hangs")
	}
	if b, err := w.ReadFile(ctx, "host/notes.md"); err != nil || string(b) != "host notes" {
		t.Fatalf("lazy file after the import: %q %v", b, err)
	}
	if err := w.Flush(ctx, "/host"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(host, "in", "a.txt")); err != nil || string(b) != "imported" {
		t.Fatalf("imported file not written back: %q %v", b, err)
	}
}
