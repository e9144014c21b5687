package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestPutRefusedKeepsOld is issue 16's CLI reproduction: a put past the
// quota (from a file and from stdin) exits 6 and leaves the old 60,000
// bytes; a refused new file is not created (issue 10).
func TestPutRefusedKeepsOld(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "q", "--quota-bytes", "100000")
	random := func(seed uint64, n int) []byte {
		r := rand.New(rand.NewPCG(seed, 0))
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	old, next := random(1, 60000), random(2, 120000)
	local := func(name string, data []byte) string {
		p := filepath.Join(c.cwd, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c.ok(nil, "-w", "q", "put", local("old", old), "/f")
	c.fails(exitQuota, nil, "-w", "q", "put", local("new", next), "/f")
	c.fails(exitQuota, next, "-w", "q", "put", "-", "/f")
	if got := c.ok(nil, "-w", "q", "cat", "/f"); !bytes.Equal([]byte(got), old) {
		t.Fatalf("/f holds %d bytes after refused puts, want the old %d", len(got), len(old))
	}
	c.fails(exitQuota, random(3, 50000), "-w", "q", "put", "-", "/big.bin")
	c.fails(exitNotFound, nil, "-w", "q", "stat", "/big.bin")
	var info struct {
		Entries int64 `json:"entries"`
		Bytes   int64 `json:"bytes"`
	}
	c.json(&info, "workspace", "info", "q")
	if info.Entries != 1 || info.Bytes != 60000 {
		t.Fatalf("workspace info after refused puts: %+v", info)
	}
}
