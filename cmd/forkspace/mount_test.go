package main

import (
	"archive/tar"
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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

// TestMountConflictCommands: a debounced write is written back before the
// command exits; a conflict exits 11, is listed by 'mount conflicts',
// survives a refresh, and 'mount resolve --keep-local' force-pushes it;
// removing a mount root is exit 7, not 8 (store busy).
func TestMountConflictCommands(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "init")
	host := t.TempDir()
	hostFile := filepath.Join(host, "f.txt")
	if err := os.WriteFile(hostFile, []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.ok(nil, "workspace", "create", "w", "--mount", "/h=file://"+host+"?mode=rw")
	c.ok([]byte("debounced\n"), "-w", "w", "put", "-", "h/new.txt")
	if throughServer {
		// The server writes back when the debounce window ends (it does
		// not exit with the command).
		for i := 0; i < 100 && !fileHolds(filepath.Join(host, "new.txt"), "debounced\n"); i++ {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(host, "new.txt")); string(b) != "debounced\n" {
		t.Fatalf("a debounced write did not reach the source by exit: %q", b)
	}
	c.fails(exitReadOnly, nil, "-w", "w", "rm", "-r", "/h")

	c.ok(nil, "workspace", "create", "m", "--mount", "/h=file://"+host+"?mode=rw&writeback=manual")
	c.ok(nil, "-w", "m", "cat", "h/f.txt")
	c.ok([]byte("local\n"), "-w", "m", "put", "-", "h/f.txt")
	if err := os.WriteFile(hostFile, []byte("upstream edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.fails(exitConflict, nil, "-w", "m", "mount", "flush")
	if out, _, code := c.run(nil, "-w", "m", "mount", "conflicts"); code != exitConflict || out != "/h/f.txt\n" {
		t.Fatalf("mount conflicts: exit %d\n%s", code, out)
	}
	c.ok([]byte("local again\n"), "-w", "m", "put", "-", "h/f.txt")
	c.ok(nil, "-w", "m", "mount", "refresh")
	if got := c.ok(nil, "-w", "m", "cat", "h/f.txt"); got != "local again\n" {
		t.Fatalf("refresh after a conflict discarded the local edit: %q", got)
	}
	c.fails(exitUsage, nil, "-w", "m", "mount", "resolve", "/h/f.txt")
	c.ok(nil, "-w", "m", "mount", "resolve", "/h/f.txt", "--keep-local")
	if b, _ := os.ReadFile(hostFile); string(b) != "local again\n" {
		t.Fatalf("keep-local did not force-push: %q", b)
	}
	c.ok(nil, "-w", "m", "mount", "conflicts")
}

// fileHolds reports whether host file p holds want.
func fileHolds(p, want string) bool {
	b, err := os.ReadFile(p)
	return err == nil && string(b) == want
}

// TestMountRootCommands: the root of a read-write mount behaves like any
// directory through the CLI — 'mkdir -p' of it succeeds, and an import
// into it (a tar stream of 'tar -C DIR -c .', whose "./" entry sets the
// root's mode and times) lands and is written back to the source — while
// a read-only mount refuses the import with exit 7 and keeps its root.
func TestMountRootCommands(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "init")
	host := t.TempDir()
	c.ok(nil, "workspace", "create", "w", "--mount", "/h=file://"+host+"?mode=rw", "--mount", "/r=file://"+host+"?mode=ro")
	c.ok(nil, "-w", "w", "mkdir", "-p", "/h")
	c.ok(nil, "-w", "w", "mkdir", "-p", "/r")
	stream := tarOf(t, map[string]string{"./": "", "./in.txt": "imported\n"})
	c.ok(stream, "-w", "w", "import", "-", "--to", "/h")
	if got := c.ok(nil, "-w", "w", "cat", "/h/in.txt"); got != "imported\n" {
		t.Fatalf("imported file: %q", got)
	}
	c.ok(nil, "-w", "w", "mount", "flush")
	if !fileHolds(filepath.Join(host, "in.txt"), "imported\n") {
		t.Fatal("the import into the mount root was not written back")
	}
	c.fails(exitReadOnly, stream, "-w", "w", "import", "-", "--to", "/r")
	c.fails(exitReadOnly, nil, "-w", "w", "rm", "-r", "/h")
}

// tarOf returns a tar stream of entries (a name ending in "/" is a
// directory of mode 0755, any other a file of mode 0644 holding its value).
func tarOf(t *testing.T, entries map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(entries[name]))}
		if strings.HasSuffix(name, "/") {
			h = &tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(entries[name])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
