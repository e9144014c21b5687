package fusefs_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/fusefs"
	"github.com/forkspace/forkspace/internal/citest"
	"github.com/forkspace/forkspace/meta"
)

// need returns the path of program cmd (from Debian package pkg), or
// skips the test where it is missing (fails in CI).
func need(t *testing.T, cmd, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(cmd)
	if err != nil {
		citest.Missing(t, "%s (Debian package %s) is not installed", cmd, pkg)
	}
	return p
}

// run runs prog with args in dir and fails the test, with its output,
// when it exits non-zero.
func run(t *testing.T, dir, prog string, args ...string) string {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", prog, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// storeMount mounts a new workspace of a fresh store and returns the
// store, for its integrity check.
func storeMount(t *testing.T) (*forkspace.Store, string) {
	st := openStore(t)
	w := create(t, st, "w", meta.Quota{})
	return st, mount(t, w.FS, fusefs.Options{})
}

// TestFioVerify writes files through the mount with fio in several job
// shapes and reads every block back checking its checksum (fio
// --verify): sequential and random writes, small and large blocks,
// several jobs at once, an mmap'd file and O_DIRECT-free buffered I/O
// with fsyncs. Then the store's integrity check finds it clean.
func TestFioVerify(t *testing.T) {
	fio := need(t, "fio", "fio")
	st, dir := storeMount(t)
	common := []string{"--directory=" + dir, "--verify_fatal=1", "--do_verify=1", "--minimal"}
	jobs := map[string][]string{
		"sequential 1 MiB blocks": {"--rw=write", "--bs=1M", "--size=48M", "--verify=crc32c"},
		"random 4 KiB blocks":     {"--rw=randwrite", "--bs=4k", "--size=8M", "--verify=md5"},
		"random mixed sizes":      {"--rw=randwrite", "--bsrange=512-64k", "--size=8M", "--verify=sha256"},
		"4 jobs at once":          {"--rw=randwrite", "--bs=16k", "--size=4M", "--numjobs=4", "--verify=crc32c"},
		"mmap":                    {"--rw=randwrite", "--bs=4k", "--size=4M", "--ioengine=mmap", "--verify=crc32c"},
		"fsync every 8 writes":    {"--rw=write", "--bs=64k", "--size=8M", "--fsync=8", "--verify=xxhash"},
	}
	for name, args := range jobs {
		t.Run(name, func(t *testing.T) {
			job := "--name=" + strings.ReplaceAll(name, " ", "-")
			run(t, dir, fio, append(append([]string{job}, args...), common...)...)
		})
	}
	report, err := st.Check(context.Background())
	if err != nil || !report.Clean() {
		t.Fatalf("fsck after fio: %+v, %v", report, err)
	}
}

// TestStressNG runs stress-ng's file system stressors on the mount with
// verification on: directories, renames, hard and symbolic links,
// dentries, fallocate, file I/O, xattrs, POSIX and flock locks, odd file
// names, fstat, seeks, sync_file_range, utime, chmod, chown and mmap.
// stress-ng exits non-zero when a stressor fails or verifies wrong data.
func TestStressNG(t *testing.T) {
	sng := need(t, "stress-ng", "stress-ng")
	st, dir := storeMount(t)
	out := run(t, dir, sng, "--temp-path", dir, "--verify", "--timeout", "4s", "--metrics-brief",
		"--dir", "1", "--rename", "1", "--link", "1", "--symlink", "1", "--dentry", "1",
		"--fallocate", "1", "--hdd", "1", "--hdd-bytes", "8M", "--xattr", "1", "--lockf", "1",
		"--flock", "1", "--filename", "1", "--fstat", "1", "--seek", "1", "--sync-file", "1",
		"--utime", "1", "--chmod", "1", "--chown", "1", "--mmap", "1", "--mmap-bytes", "8M")
	if !strings.Contains(out, "successful run completed") {
		t.Fatalf("stress-ng did not complete:\n%s", out)
	}
	report, err := st.Check(context.Background())
	if err != nil || !report.Clean() {
		t.Fatalf("fsck after stress-ng: %+v, %v", report, err)
	}
}
