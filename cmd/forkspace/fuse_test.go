package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forkspace/forkspace/fusefs"
	"github.com/forkspace/forkspace/fusefs/fusetest"
	"github.com/forkspace/forkspace/httpapi"
)

// daemon is a forkspace process serving a FUSE mount.
type daemon struct {
	t   *testing.T
	cmd *exec.Cmd
}

// start runs the binary against c's store until its stderr reports want,
// and returns the process.
func (c *cli) start(want string, args ...string) *daemon {
	c.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = c.cwd
	cmd.Env = append(os.Environ(), "FORKSPACE_HOME="+c.store, "FORKSPACE_WORKSPACE=", "GORACE=atexit_sleep_ms=0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	d := &daemon{t: c.t, cmd: cmd}
	lines := bufio.NewScanner(stderr)
	var seen []string
	for lines.Scan() {
		seen = append(seen, lines.Text())
		if strings.Contains(lines.Text(), want) {
			go func() {
				for lines.Scan() {
				}
			}()
			c.t.Cleanup(d.end)
			return d
		}
	}
	cmd.Wait()
	c.t.Fatalf("forkspace %s did not report %q:\n%s", strings.Join(args, " "), want, strings.Join(seen, "\n"))
	return nil
}

// stop sends SIGTERM and requires a clean exit.
func (d *daemon) stop() {
	d.t.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	if err := d.cmd.Wait(); err != nil {
		d.t.Fatalf("forkspace exited: %v", err)
	}
}

// end stops the process if it still runs, with SIGTERM, so it unmounts.
func (d *daemon) end() {
	if d.cmd.ProcessState == nil {
		d.cmd.Process.Signal(syscall.SIGTERM)
		d.cmd.Wait()
	}
}

// kill sends SIGKILL (nothing if it already exited).
func (d *daemon) kill() {
	if d.cmd.ProcessState == nil {
		d.cmd.Process.Kill()
		d.cmd.Wait()
	}
}

func mounted(t *testing.T, dir string) bool {
	t.Helper()
	m, err := fusefs.Mounted(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFuseMount: 'fuse mount' serves a workspace in the foreground; a
// write through it is in the store once close returns; SIGTERM unmounts
// cleanly; a checkpoint mounts read-only, and so does --read-only, with
// --uid/--gid mapping the owner; bad mount points and 'umount'
// of a directory that is not mounted exit with their codes.
func TestFuseMount(t *testing.T) {
	fusetest.Require(t)
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	c.ok([]byte("v1"), "-w", "w", "put", "-", "f")
	c.ok(nil, "-w", "w", "checkpoint", "cp")
	c.ok([]byte("v2"), "-w", "w", "put", "-", "f")

	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := c.fails(exitNotEmpty, nil, "fuse", "mount", "w", full); !strings.Contains(out, "empty directory") {
		t.Errorf("non-empty mount point: %s", out)
	}
	c.fails(exitInvalid, nil, "fuse", "umount", full)
	c.fails(exitNotFound, nil, "fuse", "mount", "nope", t.TempDir())

	dir := t.TempDir()
	d := c.start("mounted", "fuse", "mount", "w", dir)
	if data, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || string(data) != "v2" {
		t.Fatalf("read through the mount: %q, %v", data, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "g"), []byte("from the mount"), 0o640); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, ".forkspace/checkpoints/cp/f")); err != nil || string(data) != "v1" {
		t.Fatalf("read the checkpoint through the mount: %q, %v", data, err)
	}
	d.stop()
	if mounted(t, dir) {
		t.Fatal("still mounted after SIGTERM")
	}
	if got := c.ok(nil, "-w", "w", "cat", "g"); got != "from the mount" {
		t.Errorf("cat g: %q", got)
	}

	ro := t.TempDir()
	d = c.start("mounted", "fuse", "mount", "w@cp", ro)
	if data, err := os.ReadFile(filepath.Join(ro, "f")); err != nil || string(data) != "v1" {
		t.Fatalf("read through the checkpoint mount: %q, %v", data, err)
	}
	if err := os.WriteFile(filepath.Join(ro, "f"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("write to a checkpoint mount: %v", err)
	}
	c.ok(nil, "fuse", "umount", ro)
	if err := d.cmd.Wait(); err != nil {
		t.Fatalf("forkspace after umount: %v", err)
	}

	// --read-only refuses writes to a workspace; --uid and --gid show
	// what the workspace's owner 0 owns as that user and group.
	flagged := t.TempDir()
	d = c.start("mounted", "fuse", "mount", "w", flagged, "--read-only", "--uid", "1234", "--gid", "4321")
	if err := os.WriteFile(filepath.Join(flagged, "f"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("write to a --read-only mount: %v", err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(flagged, "g"), &st); err != nil || st.Uid != 1234 || st.Gid != 4321 {
		t.Fatalf("owner through --uid 1234 --gid 4321: %d:%d, %v", st.Uid, st.Gid, err)
	}
	d.stop()
	if got := c.ok(nil, "-w", "w", "cat", "f"); got != "v2" {
		t.Errorf("after the read-only mount: %q", got)
	}
}

// TestFuseKilledDaemon: fsync'd data survives SIGKILL of the daemon, the
// store opens again, and 'fuse umount' recovers the dead mount point.
func TestFuseKilledDaemon(t *testing.T) {
	fusetest.Require(t)
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	dir := t.TempDir()
	d := c.start("mounted", "fuse", "mount", "w", dir)
	f, err := os.Create(filepath.Join(dir, "synced"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("durable"); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	// Closed without fsync, created and set up as tar does (times, owner
	// and mode on the descriptor, whose changes wait for the close's
	// transaction), and removed: acknowledged when close and unlink
	// return, so they survive the daemon's death too.
	closed := filepath.Join(dir, "closed")
	g, err := os.OpenFile(closed, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.WriteString("closed"); err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(1_000_000_000, 0)
	if err := os.Chtimes(closed, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := g.Chown(1000, 1000); err != nil {
		t.Fatal(err)
	}
	if err := g.Chmod(0o600); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gone"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "gone")); err != nil {
		t.Fatal(err)
	}
	if fd, err := os.Open(dir); err != nil {
		t.Fatal(err)
	} else if err := fd.Sync(); err != nil { // the directory's fsync: the removal is durable
		t.Fatal(err)
	} else {
		fd.Close()
	}
	d.kill()
	f.Close()
	if _, err := os.ReadDir(dir); !errors.Is(err, syscall.ENOTCONN) {
		t.Fatalf("a dead mount reads: %v", err)
	}
	c.ok(nil, "fuse", "umount", dir)
	if mounted(t, dir) {
		t.Fatal("still mounted after fuse umount")
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Fatalf("mount point after umount: %v, %v", ents, err)
	}
	if got := c.ok(nil, "-w", "w", "cat", "synced"); got != "durable" {
		t.Errorf("fsync'd data after SIGKILL: %q", got)
	}
	var st httpapi.Entry
	c.json(&st, "-w", "w", "stat", "closed")
	if st.Size != int64(len("closed")) || st.Mode != "0600" || st.UID != 1000 || st.GID != 1000 || !st.Mtime.Equal(mtime) {
		t.Errorf("closed file after SIGKILL: %+v", st)
	}
	c.fails(exitNotFound, nil, "-w", "w", "stat", "gone")
	c.ok(nil, "fsck")
}

// TestServeFuse: 'serve --fuse DIR' shows every workspace at DIR/<name>/,
// keeps workspaces apart (EXDEV) and unmounts when serve stops.
func TestServeFuse(t *testing.T) {
	fusetest.Require(t)
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "a")
	c.ok(nil, "workspace", "create", "b")
	c.ok([]byte("in a"), "-w", "a", "put", "-", "f")
	dir := t.TempDir()
	before := time.Now().Add(-time.Second)
	d := c.start("serving MCP", "serve", "--addr", "127.0.0.1:0", "--fuse", dir)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || fi.ModTime().Before(before) || fi.ModTime().After(time.Now()) {
		t.Fatalf("the mount root's attributes: %v, %v (mtime should be when it was mounted)", fi, err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 2 || ents[0].Name() != "a" || ents[1].Name() != "b" {
		t.Fatalf("mount root: %v, %v", ents, err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "a/f")); err != nil || string(data) != "in a" {
		t.Fatalf("a/f: %q, %v", data, err)
	}
	if err := os.Rename(filepath.Join(dir, "a/f"), filepath.Join(dir, "b/f")); !errors.Is(err, syscall.EXDEV) {
		t.Fatalf("rename across workspaces: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b/g"), []byte("in b"), 0o644); err != nil {
		t.Fatal(err)
	}
	d.stop()
	if mounted(t, dir) {
		t.Fatal("still mounted after serve stopped")
	}
	if got := c.ok(nil, "-w", "b", "cat", "g"); got != "in b" {
		t.Errorf("b/g: %q", got)
	}
}

// TestFuseLazyMounts: through FUSE, a lazy mount's stubs list with their
// real sizes and are fetched by their first read; a virtual mount's
// devices read (no page cache: a device shows 0 bytes); a read-only
// mount is EROFS.
func TestFuseLazyMounts(t *testing.T) {
	fusetest.Require(t)
	c := newCLI(t)
	host := t.TempDir()
	big := strings.Repeat("0123456789", 10_000)
	if err := os.WriteFile(filepath.Join(host, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	c.ok(nil, "workspace", "create", "w", "--mount", "/host=file://"+host, "--mount", "/dev=dev:")
	dir := t.TempDir()
	c.start("mounted", "fuse", "mount", "w", dir)
	fi, err := os.Stat(filepath.Join(dir, "host/big.txt"))
	if err != nil || fi.Size() != int64(len(big)) {
		t.Fatalf("stub: %v, %v", fi, err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "host/big.txt")); err != nil || string(data) != big {
		t.Fatalf("first read of a stub: %d bytes, %v", len(data), err)
	}
	f, err := os.Open(filepath.Join(dir, "dev/zero"))
	if err != nil {
		t.Fatal(err)
	}
	buf := []byte("xxxx")
	if _, err := f.Read(buf); err != nil || string(buf) != "\x00\x00\x00\x00" {
		t.Fatalf("dev/zero: %q, %v", buf, err)
	}
	f.Close()
	if err := os.WriteFile(filepath.Join(dir, "host/new"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("write to a read-only mount: %v", err)
	}
}
