package gc_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the "sqlite" driver, to tamper with the database file

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
)

// TestCorruption flips a byte of a stored blob, of an inline body and of
// a tree node. Check must report each, and reads must fail with
// errdefs.ErrCorrupt rather than return wrong bytes.
func TestCorruption(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e := openEnv(t, dir)
	big, small := pool[5], pool[2]
	a, err := e.s.Create(ctx, "a", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.s.Create(ctx, "b", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []struct {
		w    *forkspace.Workspace
		name string
		data []byte
	}{{a, "big", big}, {a, "small", small}, {b, "other", pool[1]}} {
		if err := st.w.WriteFile(ctx, st.name, st.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var nodeHash cas.Hash
	for _, w := range []*forkspace.Workspace{a, b} {
		root, err := w.Root(ctx) // folds
		if err != nil {
			t.Fatal(err)
		}
		nodeHash = root // b's root: a one-leaf tree
	}
	if r, err := e.s.Check(ctx); err != nil || !r.Clean() {
		t.Fatalf("check before damage: %v %+v", err, r)
	}
	_, chunks := contentHashes(big)
	var blobHash cas.Hash
	for h := range chunks {
		blobHash = h
	}
	bodyHash := cas.Sum(small)
	if err := e.s.Close(); err != nil {
		t.Fatal(err)
	}

	// Damage the blob file and two rows of the database.
	path := e.blobs.Path(blobHash)
	flipFile(t, path)
	db, err := sql.Open("sqlite", filepath.Join(dir, "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []struct {
		name string
		h    cas.Hash
	}{{"nodes", nodeHash}, {"inline_bodies", bodyHash}} {
		var data []byte
		if err := db.QueryRow(`SELECT data FROM `+table.name+` WHERE hash = ?`, table.h[:]).Scan(&data); err != nil {
			t.Fatalf("%s: %v", table.name, err)
		}
		data[len(data)/2] ^= 0x40
		if _, err := db.Exec(`UPDATE `+table.name+` SET data = ? WHERE hash = ?`, data, table.h[:]); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	e = openEnv(t, dir)
	r, err := e.s.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"blob": blobHash.String(), "body": bodyHash.String(), "node": nodeHash.String()}
	if len(r.Problems) != len(want) {
		t.Fatalf("check found %+v, want one problem each for %v", r.Problems, want)
	}
	files := map[string]string{"blob": "a:/big", "body": "a:/small"} // the files each breaks
	for _, p := range r.Problems {
		if want[p.Kind] != p.Hash || p.Missing || strings.Join(p.Files, ",") != files[p.Kind] {
			t.Errorf("unexpected problem %+v", p)
		}
	}
	a, b = workspace2(t, e, "a"), workspace2(t, e, "b")
	for _, rd := range []struct {
		w    *forkspace.Workspace
		name string
	}{{a, "big"}, {a, "small"}, {b, "other"}} {
		if got, err := rd.w.ReadFile(ctx, rd.name); !errors.Is(err, errdefs.ErrCorrupt) {
			t.Errorf("read %s: %d bytes, error %v; want errdefs.ErrCorrupt", rd.name, len(got), err)
		}
	}

	// A missing blob is a dangling reference.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	r, err = e.s.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	missing := 0
	for _, p := range r.Problems {
		if p.Missing && p.Kind == "blob" {
			missing++
		}
	}
	if missing != 1 {
		t.Fatalf("check after removing the blob: %+v", r.Problems)
	}
}

// flipFile flips one bit in the middle of the file at path.
func flipFile(t *testing.T, path string) {
	t.Helper()
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func workspace2(t *testing.T, e *env, name string) *forkspace.Workspace {
	t.Helper()
	w, err := e.s.Workspace(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
