package fusefs_test

import (
	"context"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/forkspace/forkspace/vfs"
)

// TestSpecialFiles: mkfifo, mknod of character and block devices and a
// bound Unix socket on the mount make entries of those types in the
// workspace (devices with their numbers), which link and stat like files;
// a FIFO works as a pipe through the mount, since the kernel implements it.
func TestSpecialFiles(t *testing.T) {
	ctx := context.Background()
	w, dir := newMount(t)
	at := func(name string) string { return filepath.Join(dir, name) }
	ok(t, unix.Mkfifo(at("fifo"), 0o640))
	ok(t, unix.Mknod(at("chr"), unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))))
	ok(t, unix.Mknod(at("blk"), unix.S_IFBLK|0o600, int(unix.Mkdev(259, 70000))))
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: at("sock"), Net: "unix"})
	ok(t, err)
	l.SetUnlinkOnClose(false)
	ok(t, l.Close())
	for name, want := range map[string]fs.FileMode{
		"fifo": fs.ModeNamedPipe | 0o640, "chr": fs.ModeDevice | fs.ModeCharDevice | 0o600,
		"blk": fs.ModeDevice | 0o600, "sock": fs.ModeSocket,
	} {
		fi, err := w.Lstat(ctx, name)
		ok(t, err)
		if fi.Mode().Type() != want.Type() || (want.Perm() != 0 && fi.Mode().Perm() != want.Perm()) {
			t.Errorf("%s in the workspace: %v, want %v", name, fi.Mode(), want)
		}
	}
	var st unix.Stat_t
	ok(t, unix.Lstat(at("blk"), &st))
	if unix.Major(st.Rdev) != 259 || unix.Minor(st.Rdev) != 70000 {
		t.Errorf("blk through the mount: %d:%d, want 259:70000", unix.Major(st.Rdev), unix.Minor(st.Rdev))
	}
	if fi, _ := w.Lstat(ctx, "chr"); fi.Sys().(*vfs.Attr).Rdev != unix.Mkdev(1, 3) {
		t.Errorf("chr in the workspace: rdev %x", fi.Sys().(*vfs.Attr).Rdev)
	}
	ok(t, os.Link(at("fifo"), at("fifo2")))
	ok(t, unix.Lstat(at("fifo"), &st))
	if st.Nlink != 2 {
		t.Errorf("fifo nlink %d after a link", st.Nlink)
	}
	// The FIFO is a pipe: a writer and a reader meet through it.
	done := make(chan error, 1)
	go func() { done <- os.WriteFile(at("fifo2"), []byte("through the pipe"), 0) }()
	got, err := os.ReadFile(at("fifo"))
	ok(t, err)
	ok(t, <-done)
	if string(got) != "through the pipe" {
		t.Errorf("read from the FIFO: %q", got)
	}
	if err := unix.Mknod(at("fifo"), unix.S_IFIFO|0o600, 0); err != unix.EEXIST {
		t.Errorf("mknod over an existing name: %v", err)
	}
}
