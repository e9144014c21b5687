package main

import (
	"bytes"
	"crypto/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// foreign runs a client this project did not write (it must be
// installed: scripts/test.sh does) and returns its output.
func foreign(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is required (Debian package %s; scripts/test.sh installs it): %v", name, name, err)
	}
	cmd := exec.Command(path, args...)
	// A CA bundle set for the host's AWS tools makes rclone refuse a
	// plain-HTTP endpoint; the test talks to loopback only.
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "AWS_CA_BUNDLE=") }), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestServeS3Clients: serve --s3 with rclone and s3cmd (Debian's): a
// tree synced in and out unchanged, a 20 MiB multipart upload, listing,
// server-side copy and delete — and the workspace holds what they wrote.
func TestServeS3Clients(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "proj")
	t.Setenv("FORKSPACE_S3_ACCESS_KEY", "AKIDTEST")
	t.Setenv("FORKSPACE_S3_SECRET_KEY", "secret-for-the-test")
	addr := freeAddr(t)
	_, stop := serve(t, c.store, "--s3", addr)
	defer stop()

	src := filepath.Join(c.cwd, "tree")
	for i := range 40 {
		p := filepath.Join(src, "d"+string(rune('a'+i%4)), "f"+string(rune('a'+i))+".txt")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat("line\n", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	big := make([]byte, 20<<20)
	rand.Read(big)
	if err := os.WriteFile(filepath.Join(src, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	rc := []string{
		"RCLONE_CONFIG_FS_TYPE=s3", "RCLONE_CONFIG_FS_PROVIDER=Other", "RCLONE_CONFIG_FS_ACCESS_KEY_ID=AKIDTEST",
		"RCLONE_CONFIG_FS_SECRET_ACCESS_KEY=secret-for-the-test", "RCLONE_CONFIG_FS_ENDPOINT=http://" + addr,
		"RCLONE_CONFIG_FS_FORCE_PATH_STYLE=true", "RCLONE_CONFIG_FS_REGION=us-east-1", "RCLONE_CONFIG=/dev/null",
	}
	// Multipart above 5 MiB, so big.bin goes in four parts.
	foreign(t, rc, "rclone", "sync", src, "fs:proj/tree", "--s3-upload-cutoff", "5M", "--s3-chunk-size", "5M")
	if out := foreign(t, rc, "rclone", "check", src, "fs:proj/tree"); !strings.Contains(out, "0 differences found") {
		t.Errorf("rclone check: %s", out)
	}
	back := filepath.Join(c.cwd, "back")
	foreign(t, rc, "rclone", "sync", "fs:proj/tree", back)
	if out := foreign(t, nil, "diff", "-r", src, back); out != "" {
		t.Errorf("tree synced out differs: %s", out)
	}

	cfg := filepath.Join(c.cwd, "s3cfg")
	if err := os.WriteFile(cfg, []byte("[default]\naccess_key = AKIDTEST\nsecret_key = secret-for-the-test\nhost_base = "+addr+"\nhost_bucket = "+addr+"\nuse_https = False\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s3cmd := func(args ...string) string { return foreign(t, nil, "s3cmd", append([]string{"-c", cfg}, args...)...) }
	if out := s3cmd("ls", "s3://proj/tree/da/"); !strings.Contains(out, "s3://proj/tree/da/fa.txt") {
		t.Errorf("s3cmd ls: %s", out)
	}
	s3cmd("put", filepath.Join(src, "da", "fa.txt"), "s3://proj/notes/a.txt")
	s3cmd("cp", "s3://proj/notes/a.txt", "s3://proj/notes/b.txt")
	s3cmd("del", "s3://proj/notes/a.txt")
	got := filepath.Join(c.cwd, "got.txt")
	s3cmd("get", "s3://proj/notes/b.txt", got)
	if b, _ := os.ReadFile(got); string(b) != "line\n" {
		t.Errorf("s3cmd get: %q", b)
	}
	stop()

	// The workspace holds what the clients wrote.
	if b := c.ok(nil, "-w", "proj", "cat", "tree/big.bin"); !bytes.Equal([]byte(b), big) {
		t.Errorf("big.bin in the workspace: %d bytes", len(b))
	}
	c.fails(exitNotFound, nil, "-w", "proj", "cat", "notes/a.txt")
	if log := c.ok(nil, "-w", "proj", "log"); !strings.Contains(log, "s3.PutObject") || !strings.Contains(log, "s3:AKIDTEST") {
		t.Errorf("log: %.500s", log)
	}
}
