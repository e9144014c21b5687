package transfer_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/forkspace/forkspace/transfer"
	"github.com/forkspace/forkspace/vfs"
)

func TestXattrs(t *testing.T) {
	ctx := context.Background()
	_, ws := newWorkspace(t)
	if err := ws.MkdirAll(ctx, "src/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFile(ctx, "src/d/f", []byte("x"), 0o444); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{
		"d":   {"user.dir": "on a directory"},
		"d/f": {"user.mime": "text/plain", "user.bin": "\x00\xff", "trusted.t": "workspace only"},
	}
	for p, xs := range want {
		for k, v := range xs {
			if err := ws.Setxattr(ctx, "src/"+p, k, []byte(v)); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(f *vfs.FS, root string, hostOnly bool) {
		t.Helper()
		for p, xs := range want {
			for k, v := range xs {
				got, err := f.Getxattr(ctx, root+"/"+p, k)
				if hostOnly && k == "trusted.t" {
					if err == nil {
						t.Errorf("%s/%s: %s crossed the host", root, p, k)
					}
					continue
				}
				if err != nil || string(got) != v {
					t.Errorf("%s/%s %s = %q, %v; want %q", root, p, k, got, err, v)
				}
			}
		}
	}

	// Workspace → tar → workspace keeps every namespace.
	var archive bytes.Buffer
	if err := transfer.ExportTar(ctx, ws.FS, "src", &archive, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := transfer.ImportTar(ctx, ws.FS, "fromtar", &archive, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	check(ws.FS, "fromtar", false)

	// Workspace → host → workspace keeps the user namespace only.
	out := t.TempDir()
	if err := transfer.ExportDir(ctx, ws.FS, "src", out, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := unix.Lgetxattr(filepath.Join(out, "d/f"), "user.mime", buf)
	if err != nil || string(buf[:n]) != "text/plain" {
		t.Errorf("host user.mime = %q, %v", buf[:n], err)
	}
	if err := transfer.ImportDir(ctx, ws.FS, "fromhost", out, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	check(ws.FS, "fromhost", true)
}
