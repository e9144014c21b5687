package main

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// evilTar returns an archive whose entry escapes the target with "..".
func evilTar(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "../escape", Size: 1, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestImportExport(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	src := filepath.Join(c.cwd, "src")
	files := map[string]string{"a.txt": "alpha", "sub/b.txt": "beta", "sub/deeper/c": "gamma"}
	for name, data := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("sub/b.txt", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(src, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Entries, Bytes int64
		Path           string
	}
	c.json(&sum, "-w", "w", "import", src, "--to", "/proj")
	if sum.Entries != 8 || sum.Bytes != 14 || sum.Path != "proj" {
		t.Errorf("import summary: %+v", sum)
	}
	check := func(dir string) {
		t.Helper()
		for name, data := range files {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || string(b) != data {
				t.Errorf("%s/%s: %q %v", dir, name, b, err)
			}
			if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != 0o640 {
				t.Errorf("%s/%s mode: %v %v", dir, name, fi, err)
			}
		}
		if target, err := os.Readlink(filepath.Join(dir, "link")); err != nil || target != "sub/b.txt" {
			t.Errorf("%s/link: %q %v", dir, target, err)
		}
		if fi, err := os.Stat(filepath.Join(dir, "empty")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s/empty: %v %v", dir, fi, err)
		}
	}
	out := filepath.Join(c.cwd, "out")
	c.ok(nil, "-w", "w", "export", out, "--from", "proj")
	check(out)

	// Through tar on stdout and stdin, and through .tar.gz files.
	archive := c.ok(nil, "-w", "w", "export", "-", "--from", "proj")
	c.ok(nil, "workspace", "create", "v")
	c.ok([]byte(archive), "-w", "v", "import", "-")
	tgz := filepath.Join(c.cwd, "v.tgz")
	c.ok(nil, "-w", "v", "export", tgz)
	c.ok(nil, "workspace", "create", "u")
	if out := c.ok(nil, "-w", "u", "import", tgz, "--to", "x"); !strings.Contains(out, "imported 7 entries (14 B) into u:/x") {
		t.Errorf("import summary: %q", out)
	}
	out2 := filepath.Join(c.cwd, "out2")
	c.ok(nil, "-w", "u", "export", out2, "--from", "/x")
	check(out2)

	// A checkpoint exports like a live head.
	c.ok(nil, "-w", "u", "checkpoint", "cp")
	c.ok(nil, "-w", "u", "rm", "-r", "x")
	out3 := filepath.Join(c.cwd, "out3")
	c.ok(nil, "-w", "u@cp", "export", out3, "--from", "x")
	check(out3)

	// Through a .zip file (issue 9: out.zip used to become a directory).
	zipFile := filepath.Join(c.cwd, "u.zip")
	c.ok(nil, "-w", "u@cp", "export", zipFile, "--from", "x")
	if fi, err := os.Stat(zipFile); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("export to .zip: %v %v", fi, err)
	}
	c.ok(nil, "workspace", "create", "z")
	c.ok(nil, "-w", "z", "import", zipFile, "--to", "y")
	out4 := filepath.Join(c.cwd, "out4")
	c.ok(nil, "-w", "z", "export", out4, "--from", "y")
	check(out4)

	// An archive format the CLI cannot write is refused before anything
	// is created, never written as a directory of that name.
	xz := filepath.Join(c.cwd, "u.tar.xz")
	if msg := c.fails(exitInvalid, nil, "-w", "u", "export", xz); !strings.Contains(msg, "cannot write .tar.xz archives") {
		t.Errorf("export to .tar.xz: %q", msg)
	}
	if _, err := os.Lstat(xz); !os.IsNotExist(err) {
		t.Errorf("a refused export left %s: %v", xz, err)
	}

	// Hostile archives are refused with exit code 5.
	c.fails(exitInvalid, []byte(evilTar(t)), "-w", "u", "import", "-")
}
