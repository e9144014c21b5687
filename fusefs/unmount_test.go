package fusefs_test

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/forkspace/forkspace/fusefs"
	"github.com/forkspace/forkspace/fusefs/fusetest"
	"github.com/forkspace/forkspace/internal/citest"
	"github.com/forkspace/forkspace/meta"
)

// TestUnmountWithCopyElsewhere: a process that made a mount namespace
// while the file system was mounted holds a copy of the mount, which
// keeps the FUSE connection up after the unmount; Unmount returns all
// the same (it waited for that process to end: a sandbox run on a
// mount, killed, did not end for as long as an unrelated process that
// unshared its mount namespace meanwhile lived).
func TestUnmountWithCopyElsewhere(t *testing.T) {
	fusetest.Require(t)
	st := openStore(t)
	w := create(t, st, "w", meta.Quota{})
	dir := t.TempDir()
	srv, err := fusefs.Mount(context.Background(), dir, w.FS, fusefs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A namespace of its own, copied from this one with the mount in it.
	holder := exec.Command("sleep", "600")
	if os.Geteuid() == 0 {
		holder.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	} else {
		holder.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
			UidMappings: []syscall.SysProcIDMap{{HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{HostID: os.Getgid(), Size: 1}}}
	}
	if err := holder.Start(); err != nil {
		srv.Unmount()
		citest.Missing(t, "cannot make a mount namespace here: %v", err)
	}
	t.Cleanup(func() {
		holder.Process.Kill()
		holder.Wait()
	})
	unmounted := make(chan error, 1)
	go func() { unmounted <- srv.Unmount() }()
	select {
	case err := <-unmounted:
		if err != nil {
			t.Fatalf("unmount: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Unmount waits for the process holding a copy of the mount in its namespace")
	}
	if m, err := fusefs.Mounted(dir); err != nil || m {
		t.Errorf("still mounted after Unmount: %v, %v", m, err)
	}
}
