package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type wsUsage struct {
	Entries int64 `json:"entries"`
	Bytes   int64 `json:"bytes"`
}

// usageOf returns workspace ws's entries and bytes.
func usageOf(c *cli, ws string) wsUsage {
	c.t.Helper()
	var u wsUsage
	c.json(&u, "workspace", "info", ws)
	return u
}

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
	if info := usageOf(c, "q"); info.Entries != 1 || info.Bytes != 60000 {
		t.Fatalf("workspace info after refused puts: %+v", info)
	}
}

// TestImportRefusedChangesNothing is issue 16 item 2 through the CLI: an
// import past the quota exits 6 and a hostile archive exits 5 (with a
// symlink to a host path before its bad entry), both leaving the
// workspace as it was: no target directory, no partial tree.
func TestImportRefusedChangesNothing(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "q", "--quota-bytes", "100000")
	src := filepath.Join(c.cwd, "t")
	for _, d := range []string{"a", "b"} {
		if err := os.MkdirAll(filepath.Join(src, d), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 3; i++ {
			data := bytes.Repeat([]byte{byte(i), d[0]}, 15000)
			if err := os.WriteFile(filepath.Join(src, d, string(rune('0'+i))), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	empty := func() {
		t.Helper()
		if info := usageOf(c, "q"); info.Entries != 0 || info.Bytes != 0 {
			t.Fatalf("after a refused import: %+v", info)
		}
	}
	c.fails(exitQuota, nil, "-w", "q", "import", src, "--to", "/p")
	empty()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Typeflag: tar.TypeSymlink, Name: "host", Linkname: "/etc/passwd"},
		{Typeflag: tar.TypeReg, Name: "../escape", Mode: 0o644},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	c.fails(exitInvalid, buf.Bytes(), "-w", "q", "import", "-", "--to", "/x")
	empty()
}

// TestExecPullRefused is issue 16 item 3 through the CLI: a run whose
// changes pass the quota exits 6, says so on stderr, and leaves the
// workspace as it was; --json reports pulled_back false.
func TestExecPullRefused(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "q", "--quota-bytes", "100000")
	c.ok([]byte("original\n"), "-w", "q", "put", "-", "keep.txt")
	cmd := "echo changed > keep.txt; echo a > a.txt; head -c 60000 /dev/urandom > b.bin; head -c 60000 /dev/urandom > c.bin; echo z > z.txt"
	_, errs, code := c.run(nil, "-w", "q", "exec", "--", cmd)
	if code != exitQuota || !strings.Contains(errs, "exit code 0") || !strings.Contains(errs, "pull-back refused") ||
		!strings.Contains(errs, "not kept: modified keep.txt (quota exceeded)") {
		t.Fatalf("exec past the quota: exit %d\nstderr %q", code, errs)
	}
	if got := c.ok(nil, "-w", "q", "cat", "keep.txt"); got != "original\n" {
		t.Fatalf("keep.txt = %q", got)
	}
	if u := usageOf(c, "q"); u.Entries != 1 {
		t.Fatalf("workspace after a refused pull-back: %+v", u)
	}
	out, _, code := c.run(nil, "-w", "q", "exec", "--json", "--", cmd)
	var res struct {
		ExitCode   int    `json:"exit_code"`
		PulledBack bool   `json:"pulled_back"`
		PullError  string `json:"pull_error"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitQuota || res.ExitCode != 0 || res.PulledBack || res.PullError == "" {
		t.Fatalf("exec --json past the quota: exit %d, %v\n%s", code, err, out)
	}
}
