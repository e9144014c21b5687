package forkspace_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
)

// TestInlineBodyChecksums damages inline bodies and their stored
// checksums (docs/decisions/034) in a store on disk, then reads them in
// bulk (ReadFiles: grep, export), one by one and through fsck. A damaged
// body is errdefs.ErrCorrupt everywhere; a damaged or missing checksum
// (a row written before checksums) leaves a sound body readable, and a
// put of the same body writes the missing checksum.
func TestInlineBodyChecksums(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openStore(t, dir)
	w := mustCreate(t, st, "a")
	files := map[string]string{
		"damaged":     "a body whose bytes get damaged",
		"badsum":      "a body whose checksum gets damaged",
		"nosum":       "a body stored before checksums",
		"sound":       "a body left alone",
		"d/empty.txt": "",
	}
	for name, data := range files {
		write(t, w, name, data)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	raw, err := sql.Open("sqlite", filepath.Join(dir, "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	damage := func(query, file string, args ...any) {
		t.Helper()
		h := cas.Sum([]byte(files[file]))
		res, err := raw.Exec(query, append(args, h[:])...)
		if err != nil {
			t.Fatalf("damage %s: %v", file, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("damage %s: %d rows changed, want 1", file, n)
		}
	}
	damage(`UPDATE inline_bodies SET data = ? WHERE hash = ?`, "damaged", []byte("a body whose bytes got DAMAGED"))
	damage(`UPDATE inline_bodies SET crc = crc + 1 WHERE hash = ?`, "badsum")
	damage(`UPDATE inline_bodies SET crc = NULL WHERE hash = ?`, "nosum")

	st = openStore(t, dir)
	w, err = st.Workspace(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"damaged", "badsum", "nosum", "sound", "d/empty.txt"}
	err = w.ReadFiles(ctx, names, func(i int, data []byte, err error) error {
		switch name := names[i]; {
		case name == "damaged" && !errors.Is(err, errdefs.ErrCorrupt):
			t.Errorf("bulk read of a damaged body: %q, %v; want ErrCorrupt", data, err)
		case name != "damaged" && (err != nil || string(data) != files[name]):
			t.Errorf("bulk read of %s: %q, %v; want %q", name, data, err, files[name])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if data, err := w.ReadFile(ctx, "damaged"); !errors.Is(err, errdefs.ErrCorrupt) {
		t.Errorf("read of a damaged body: %q, %v; want ErrCorrupt", data, err)
	}
	r, err := st.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 1 || r.Problems[0].Kind != "body" || r.Problems[0].Missing {
		t.Errorf("fsck found %+v, want the damaged body alone", r.Problems)
	}

	write(t, w, "again", files["nosum"])
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	h := cas.Sum([]byte(files["nosum"]))
	var crc sql.NullInt64
	if err := raw.QueryRow(`SELECT crc FROM inline_bodies WHERE hash = ?`, h[:]).Scan(&crc); err != nil || !crc.Valid {
		t.Errorf("a put of a body stored without a checksum left it %v, %v", crc, err)
	}
}
