package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/httpapi"
)

func TestFileCommands(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	w := []string{"-w", "w"}
	cmd := func(args ...string) []string { return append(append([]string{}, w...), args...) }

	// Binary data through stdin and stdout.
	data := make([]byte, 300<<10)
	for i := range data {
		data[i] = byte(i*7 + i>>8)
	}
	c.ok(nil, cmd("mkdir", "-p", "/src/deep/er")...)
	c.ok(data, cmd("put", "-", "/src/data.bin")...)
	if got := c.ok(nil, cmd("get", "src/data.bin", "-")...); got != string(data) {
		t.Errorf("get - returned %d bytes, want %d", len(got), len(data))
	}
	if got := c.ok(nil, cmd("cat", "/src/data.bin")...); got != string(data) {
		t.Errorf("cat returned %d bytes", len(got))
	}
	// A local file, into a directory, and back to a local file.
	local := filepath.Join(c.cwd, "local.sh")
	if err := os.WriteFile(local, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c.ok(nil, cmd("put", local, "src/")...)
	c.ok(nil, cmd("get", "src/local.sh", "copy.sh")...)
	if fi, err := os.Stat(filepath.Join(c.cwd, "copy.sh")); err != nil || fi.Mode().Perm() != 0o755 || fi.Size() != 10 {
		t.Errorf("get to a local file: %v %v", fi, err)
	}
	c.ok(nil, cmd("get", "src/local.sh")...)
	if _, err := os.Stat(filepath.Join(c.cwd, "local.sh")); err != nil {
		t.Errorf("get without LOCAL: %v", err)
	}

	var entries []httpapi.Entry
	c.json(&entries, cmd("ls", "src")...)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name+":"+e.Type)
	}
	if strings.Join(names, ",") != "data.bin:file,deep:dir,local.sh:file" {
		t.Errorf("ls --json: %v", names)
	}
	if entries[0].Size != int64(len(data)) || entries[0].Mode != "0644" || entries[0].Ino == 0 || entries[0].Path != "src/data.bin" {
		t.Errorf("ls entry: %+v", entries[0])
	}
	long := c.ok(nil, cmd("ls", "-l", "/src")...)
	if !strings.Contains(long, "-rwxr-xr-x") || !strings.Contains(long, "drwxr-xr-x") || !strings.Contains(long, "300 KiB") {
		t.Errorf("ls -l:\n%s", long)
	}
	if out := c.ok(nil, cmd("ls")...); out != "src/\n" {
		t.Errorf("ls: %q", out)
	}

	c.ok(nil, cmd("mv", "src/data.bin", "src/deep")...)
	c.ok(nil, cmd("mv", "/src/local.sh", "run.sh")...)
	var st httpapi.Entry
	c.json(&st, cmd("stat", "src/deep/data.bin")...)
	if st.Type != "file" || st.Size != int64(len(data)) || st.Nlink != 1 {
		t.Errorf("stat: %+v", st)
	}
	if out := c.ok(nil, cmd("stat", "run.sh")...); !strings.Contains(out, "0755 (-rwxr-xr-x)") {
		t.Errorf("stat:\n%s", out)
	}
	c.ok(nil, cmd("rm", "run.sh")...)
	c.ok(nil, cmd("rm", "-r", "src")...)
	c.json(&entries, cmd("ls", "/")...)
	if len(entries) != 0 {
		t.Errorf("after rm: %+v", entries)
	}
	c.fails(exitNotFound, nil, cmd("rm", "-r", "src")...)
	c.fails(exitInvalid, nil, cmd("put", c.cwd, "dir")...)
}
