package main

import (
	"encoding/json"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/httpapi"
)

// TestGCFsckDf drives gc, fsck and df: --dry-run deletes nothing, a
// collection reclaims what the dry run listed, --json parses, df
// attributes bytes, and fsck exits with status 9 on a damaged blob.
func TestGCFsckDf(t *testing.T) {
	c := newCLI(t)
	random := func(seed uint64, n int) []byte {
		r := rand.New(rand.NewPCG(seed, seed))
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	c.ok(nil, "workspace", "create", "a")
	c.ok(random(1, 40<<10), "-w", "a", "put", "-", "/big")
	c.ok([]byte("small"), "-w", "a", "put", "-", "/small")
	c.ok(nil, "workspace", "fork", "a", "b")
	c.ok(random(2, 50<<10), "-w", "b", "put", "-", "/only-b")
	c.ok(nil, "workspace", "delete", "b")

	var before, after httpapi.DF
	c.json(&before, "df")
	var dry httpapi.GCResult
	c.json(&dry, "gc", "--dry-run", "--grace", "0")
	if !dry.DryRun || dry.Garbage.Blobs != 1 || dry.Reclaimed.Objects() != 0 {
		t.Fatalf("dry run: %+v", dry)
	}
	c.json(&after, "df")
	if after.Stored != before.Stored {
		t.Fatalf("dry run changed the store: %+v, then %+v", before.Stored, after.Stored)
	}
	var kept httpapi.GCResult
	c.json(&kept, "gc") // default grace: everything is younger
	if kept.Reclaimed.Objects() != 0 || kept.Young.Blobs != 1 {
		t.Fatalf("gc with the default grace: %+v", kept)
	}
	var done httpapi.GCResult
	c.json(&done, "gc", "--grace", "0s")
	if done.Reclaimed.Blobs != 1 || done.Reclaimed.BlobBytes != 50<<10 {
		t.Fatalf("gc: %+v", done)
	}
	c.json(&after, "df")
	if after.Garbage.Objects() != 0 || after.Stored.Blobs != 1 || len(after.Workspaces) != 1 {
		t.Fatalf("df after gc: %+v", after)
	}
	if w := after.Workspaces[0]; w.Name != "a" || w.ExclusiveBytes < 40<<10 || w.SharedBytes != 0 || w.LogicalBytes != 40<<10+5 {
		t.Fatalf("df workspace: %+v", w)
	}
	var info struct {
		ExclusiveBytes int64 `json:"exclusive_bytes"`
	}
	c.json(&info, "workspace", "info", "a")
	if info.ExclusiveBytes != after.Workspaces[0].ExclusiveBytes {
		t.Fatalf("workspace info exclusive bytes %d, df says %d", info.ExclusiveBytes, after.Workspaces[0].ExclusiveBytes)
	}
	c.ok(nil, "gc", "--dry-run")
	c.ok(nil, "df")

	var report struct {
		Problems []json.RawMessage `json:"problems"`
	}
	c.json(&report, "fsck")
	if len(report.Problems) != 0 {
		t.Fatalf("fsck of a sound store: %s", report.Problems)
	}

	// Damage the one blob.
	var blob string
	filepath.WalkDir(filepath.Join(c.store, "blobs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && len(d.Name()) == 64 {
			blob = p
		}
		return nil
	})
	if blob == "" {
		t.Fatal("no blob file found")
	}
	if err := os.Chmod(blob, 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	b[100] ^= 1
	if err := os.WriteFile(blob, b, 0o600); err != nil {
		t.Fatal(err)
	}
	c.fails(exitCorrupt, nil, "fsck")
	out, _, code := c.run(nil, "fsck", "--json")
	if code != exitCorrupt {
		t.Fatalf("fsck --json of a damaged store: exit %d", code)
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil || len(report.Problems) != 1 {
		t.Fatalf("fsck --json: %v %s", err, out)
	}
	c.fails(exitCorrupt, nil, "-w", "a", "cat", "/big")

	// A blob deleted from under the store is damage as well (it exited 3,
	// "no such file", with the blob's host path in the message).
	if err := os.Remove(blob); err != nil {
		t.Fatal(err)
	}
	if msg := c.fails(exitCorrupt, nil, "-w", "a", "cat", "/big"); strings.Contains(msg, c.store) || !strings.Contains(msg, "missing from the store") {
		t.Errorf("cat of a file whose chunk is gone: %q", msg)
	}
	// fsck names the blob by address, not by its host path.
	if out, errs, code := c.run(nil, "fsck"); code != exitCorrupt || strings.Contains(out+errs, c.store) {
		t.Errorf("fsck of a store missing a blob: exit %d, %s%s", code, out, errs)
	}
}
