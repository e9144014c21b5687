package storecopy_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/storecopy"
)

// TestSalvage damages a leaf page of the staging log of a real meta.db
// (found with the dbstat virtual table) and deletes one blob: a plain
// copy fails, a salvage copies every workspace whose rows are not on that
// page — each reads as it did, checkpoints included — and names the
// workspaces on the page and the file whose blob is gone as lost.
func TestSalvage(t *testing.T) {
	ctx := context.Background()
	srcDir := filepath.Join(t.TempDir(), "src")
	st := openLocal(t, srcDir)
	const n = 10
	names := make([]string, n)
	ids := map[string]string{}
	for i := range n {
		names[i] = fmt.Sprintf("w%d", i)
		w, err := st.Create(ctx, names[i], forkspace.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids[names[i]] = w.ID()
		if err := w.MkdirAll(ctx, "d", 0o755); err != nil {
			t.Fatal(err)
		}
		for j := range 60 {
			if err := w.WriteFile(ctx, fmt.Sprintf("d/f%02d.txt", j), []byte(strings.Repeat(fmt.Sprint(i, j, " "), 40)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WriteFile(ctx, "big.bin", random(uint64(i), 100<<10), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Checkpoint(ctx, "cp"); err != nil {
			t.Fatal(err)
		}
	}
	st = settled(t, st, func() *forkspace.Store { return openLocal(t, srcDir) })
	want := describe(t, st)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	page := damageStagingPage(t, filepath.Join(srcDir, "meta.db"))
	held := firstColumns(t, page)
	var onPage []string
	for _, name := range names {
		if slices.Contains(held, ids[name]) {
			onPage = append(onPage, name)
		}
	}
	if len(onPage) == 0 || len(onPage) > n/2 {
		t.Fatalf("the damaged page holds rows of %v: the test needs some workspaces on it and most off it", onPage)
	}
	// One survivor's blob goes missing too: the workspace whose rows are
	// furthest from the page (staging_records is ordered by workspace ID), which
	// no scan reaching the page's neighbours loses.
	byID := slices.Clone(names)
	slices.SortFunc(byID, func(a, b string) int { return strings.Compare(ids[a], ids[b]) })
	far := byID[0]
	if ids[onPage[0]] < ids[byID[n/2]] {
		far = byID[n-1]
	}
	victim := slices.Index(names, far)
	h := cas.Sum(random(uint64(victim), 100<<10))
	if err := os.Remove(filepath.Join(srcDir, "blobs", h.String()[:2], h.String()[2:4], h.String())); err != nil {
		t.Fatal(err)
	}

	plainDir := filepath.Join(t.TempDir(), "plain")
	src, dst := localSide(t, srcDir), localSide(t, plainDir)
	if _, err := storecopy.Copy(ctx, src, dst, storecopy.Options{}); err == nil {
		t.Error("a plain copy of the damaged store succeeded")
	}
	closeSide(t, src)
	closeSide(t, dst)

	outDir := filepath.Join(t.TempDir(), "out")
	src, dst = localSide(t, srcDir), localSide(t, outDir)
	r, err := storecopy.Copy(ctx, src, dst, storecopy.Options{Salvage: true})
	closeSide(t, src)
	closeSide(t, dst)
	if !errors.Is(err, storecopy.ErrLost) || r == nil || !r.Verified {
		t.Fatalf("salvage: %+v, %v; want a verified copy and ErrLost", r, err)
	}
	t.Logf("on the page: %v; lost: %+v", onPage, r.Lost)
	lost := map[string]bool{}
	for _, l := range r.Lost {
		lost[l.Kind+" "+l.Name] = true
	}
	for _, name := range onPage {
		if !lost["workspace default/"+name] {
			t.Errorf("workspace %s, whose rows were on the damaged page, is not reported lost: %+v", name, r.Lost)
		}
	}
	victimFile := "file default/" + names[victim] + ":/big.bin"
	if !lost[victimFile] {
		t.Errorf("the file whose blob is gone is not reported as %q: %+v", victimFile, r.Lost)
	}

	got := openLocal(t, outDir)
	defer got.Close()
	survivors := 0
	for _, name := range names {
		w, err := got.Workspace(ctx, name)
		if lost["workspace default/"+name] {
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("lost workspace %s in the salvage: %v", name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("workspace %s not lost and not salvaged: %v", name, err)
		}
		survivors++
		if name == names[victim] {
			if _, err := w.ReadFile(ctx, "big.bin"); err == nil {
				t.Errorf("%s/big.bin reads without its blob", name)
			}
			continue
		}
		gotW, wantW := map[string]any{}, map[string]any{}
		describeWorkspace(t, got, ctx, name, gotW)
		for k := range gotW {
			wantW[k] = want[k]
		}
		same(t, "salvaged workspace "+name, gotW, wantW)
	}
	if survivors < n/2 {
		t.Errorf("%d of %d workspaces survived a one-page damage", survivors, n)
	}
}

// damageStagingPage overwrites a leaf page of staging_records in the
// middle of the file and returns what it held.
func damageStagingPage(t *testing.T, db string) []byte {
	t.Helper()
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	var count, page, size int64
	if err := raw.QueryRow(`SELECT COUNT(*) FROM dbstat WHERE name = 'staging_records' AND pagetype = 'leaf'`).Scan(&count); err != nil {
		t.Fatal(err)
	}
	err = raw.QueryRow(`SELECT pageno, pgsize FROM dbstat WHERE name = 'staging_records' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1 OFFSET ?`, count/2).Scan(&page, &size)
	raw.Close()
	if err != nil {
		t.Fatalf("find a leaf page of staging_records: %v", err)
	}
	f, err := os.OpenFile(db, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := make([]byte, size)
	if _, err := f.ReadAt(old, (page-1)*size); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5}, int(size)), (page-1)*size); err != nil {
		t.Fatal(err)
	}
	return old
}

// firstColumns decodes the first column (workspace_id) of each row of a
// leaf page of a WITHOUT ROWID table (an index b-tree leaf, type 0x0a),
// following the cell pointer array, so that freed space holding rows
// that moved elsewhere does not count.
func firstColumns(t *testing.T, page []byte) []string {
	t.Helper()
	if page[0] != 0x0a {
		t.Fatalf("page type %#x, want an index leaf (0x0a)", page[0])
	}
	varint := func(b []byte) (uint64, int) {
		var v uint64
		for i := range 8 {
			v = v<<7 | uint64(b[i]&0x7f)
			if b[i] < 0x80 {
				return v, i + 1
			}
		}
		return v<<8 | uint64(b[8]), 9
	}
	cells := int(binary.BigEndian.Uint16(page[3:5]))
	var out []string
	for i := range cells {
		off := int(binary.BigEndian.Uint16(page[8+2*i:]))
		_, n := varint(page[off:]) // payload size
		rec := page[off+n:]
		hdr, n := varint(rec)
		typ, _ := varint(rec[n:])
		if typ < 13 || typ%2 == 0 {
			t.Fatalf("cell %d: first column of serial type %d, want text", i, typ)
		}
		out = append(out, string(rec[hdr:hdr+(typ-13)/2]))
	}
	return out
}
