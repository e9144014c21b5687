package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/internal/pgtest"
	"github.com/forkspace/forkspace/internal/s3test"
	"github.com/forkspace/forkspace/storecopy"
)

// TestStoreCopy copies a local store to PostgreSQL + versitygw with
// 'store copy', reads the copy through --meta and --blob (files,
// checkpoints, history and a diff as in the source), refuses to copy onto
// it again (exit 10) or from a spec holding a secret (exit 2), and copies
// it back into a new directory that reads the same.
func TestStoreCopy(t *testing.T) {
	c := newCLI(t)
	big := strings.Repeat("forkspace store copy\n", 5000)
	c.ok(nil, "workspace", "create", "a")
	c.ok([]byte(big), "-w", "a", "put", "-", "/big.txt")
	c.ok([]byte("small\n"), "-w", "a", "put", "-", "/small.txt")
	c.ok(nil, "-w", "a", "checkpoint", "v1")
	c.ok(nil, "workspace", "fork", "a", "b")
	c.ok([]byte("changed\n"), "-w", "b", "put", "-", "/small.txt")
	reads := func(env ...string) map[string]string {
		args := func(a ...string) []string { return append(append([]string{}, env...), a...) }
		return map[string]string{
			"cat":         c.ok(nil, args("-w", "a", "cat", "/big.txt")...),
			"ls":          c.ok(nil, args("workspace", "ls")...),
			"checkpoints": c.ok(nil, args("-w", "a", "checkpoints")...),
			"diff":        c.ok(nil, args("diff", "a@v1", "b")...),
			"history":     c.ok(nil, args("-w", "b", "history")...),
			"log":         c.ok(nil, args("log")...),
		}
	}
	want := reads()

	v := s3test.StartVersity(t, "copies")
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	db := pgtest.DB(t)
	blobURL := "s3://copies/one?endpoint=" + v.URL + "&region=" + s3test.Region + "&path_style=true"
	remote := "meta=" + db + ",blob=" + blobURL
	var r storecopy.Report
	c.json(&r, "store", "copy", c.store, remote)
	if !r.Verified || r.Blobs == 0 || r.Tables["workspaces"].Rows != 2 {
		t.Fatalf("store copy --json: %+v", r)
	}
	got := reads("--meta", db, "--blob", blobURL)
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("%s on the copy:\n%s\nwant:\n%s", k, got[k], want[k])
		}
	}
	if errs := c.fails(exitNotEmpty, nil, "store", "copy", c.store, remote); !strings.Contains(errs, "holds a finished copy") {
		t.Errorf("copy onto the copy: %s", errs)
	}
	for _, spec := range []string{
		"meta=" + db + ",blob=s3://copies/two?endpoint=http://AK:S3CR3T@127.0.0.1:1",
		"meta=postgres://u:S3CR3T@127.0.0.1:1/db,blob=" + blobURL,
	} {
		if errs := c.fails(exitUsage, nil, "store", "copy", c.store, spec); strings.Contains(errs, "S3CR3T") {
			t.Errorf("store copy to %s echoes the secret: %s", spec, errs)
		}
	}
	c.fails(exitUsage, nil, "store", "copy", c.store, "blob="+blobURL)

	back := filepath.Join(t.TempDir(), "back")
	out := c.ok(nil, "store", "copy", remote, back)
	if !strings.Contains(out, "verified") || !strings.Contains(out, "workspaces") {
		t.Errorf("store copy: %s", out)
	}
	got = reads("--store", back)
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("%s on the copy back:\n%s\nwant:\n%s", k, got[k], want[k])
		}
	}
	assertNoSecret(t, back, s3test.SecretKey)
}

// TestStoreCopySalvage: a store missing a blob copies with --salvage,
// names the file it lost and exits 12. A plain copy copies the store as it
// is, the missing blob missing there too (fsck finds such damage).
func TestStoreCopySalvage(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "a")
	big := strings.Repeat("salvage me\n", 3000)
	c.ok([]byte(big), "-w", "a", "put", "-", "/big.txt")
	c.ok([]byte("kept\n"), "-w", "a", "put", "-", "/small.txt")
	h := cas.Sum([]byte(big)).String()
	if err := os.Remove(filepath.Join(c.store, "blobs", h[:2], h[2:4], h)); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(t.TempDir(), "plain")
	c.ok(nil, "store", "copy", c.store, plain)
	c.fails(exitCorrupt, nil, "--store", plain, "-w", "a", "cat", "/big.txt")
	out := filepath.Join(t.TempDir(), "out")
	stdout, errs, code := c.run(nil, "store", "copy", "--salvage", c.store, out)
	if code != exitLost || !strings.Contains(stdout, "lost file default/a:/big.txt") {
		t.Fatalf("store copy --salvage: exit %d\n%s\n%s", code, stdout, errs)
	}
	if got := c.ok(nil, "--store", out, "-w", "a", "cat", "/small.txt"); got != "kept\n" {
		t.Errorf("small.txt in the salvage: %q", got)
	}
	c.fails(exitCorrupt, nil, "--store", out, "-w", "a", "cat", "/big.txt")
}
