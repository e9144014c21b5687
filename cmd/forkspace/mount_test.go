package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
)

func TestMountCommands(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "init")
	host := t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "readme.md"), []byte("from the host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := c.fails(exitInvalid, nil, "workspace", "create", "bad", "--mount", "/x=ftp://host/p")
	if !strings.Contains(out, `unknown scheme "ftp"`) || !strings.Contains(out, "s3") || !strings.Contains(out, "git+https") {
		t.Errorf("unknown scheme:\n%s", out)
	}
	c.fails(exitInvalid, nil, "workspace", "create", "bad", "--mount", "/a=dev:", "--mount", "/a/b=dev:")
	c.ok(nil, "workspace", "create", "alpha",
		"--mount", "/host=file://"+host+"?mode=rw&writeback=manual",
		"--mount", "/dev=dev:")
	if got := c.ok(nil, "-w", "alpha", "cat", "host/readme.md"); got != "from the host\n" {
		t.Errorf("cat through the mount: %q", got)
	}
	c.ok([]byte("agent wrote\n"), "-w", "alpha", "put", "-", "host/out.txt")
	var ms []forkspace.MountInfo
	c.json(&ms, "-w", "alpha", "mount", "ls")
	if len(ms) != 2 || ms[1].Root != "/host" || len(ms[1].Pending) != 1 || ms[0].Source != "dev:" {
		t.Fatalf("mount ls: %+v", ms)
	}
	if out := c.ok(nil, "-w", "alpha", "mount", "ls"); !strings.Contains(out, "read-write") || !strings.Contains(out, "file://") {
		t.Errorf("mount ls:\n%s", out)
	}
	c.ok(nil, "-w", "alpha", "mount", "flush")
	if b, _ := os.ReadFile(filepath.Join(host, "out.txt")); string(b) != "agent wrote\n" {
		t.Errorf("flushed: %q", b)
	}
	if err := os.WriteFile(filepath.Join(host, "new.md"), []byte("new upstream\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.ok(nil, "-w", "alpha", "mount", "refresh", "/host")
	c.ok(nil, "-w", "alpha", "mount", "prefetch")
	if got := c.ok(nil, "-w", "alpha", "cat", "host/new.md"); got != "new upstream\n" {
		t.Errorf("after refresh: %q", got)
	}
	c.fails(exitNotFound, nil, "-w", "alpha", "mount", "flush", "/nope")
	if got := c.ok(nil, "-w", "alpha", "ls", "dev"); !strings.Contains(got, "urandom") {
		t.Errorf("ls dev:\n%s", got)
	}
	c.fails(exitReadOnly, []byte("x"), "-w", "alpha", "put", "-", "dev/zero/x")
}
