package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"pgregory.net/rapid"

	"github.com/forkspace/forkspace/vfs"
)

// TestReadDirPage: walking a directory page by page, with any page size
// and from any name (present or not), lists what ReadDir lists after that
// name, and each entry's Info, read with the page, is what Lstat says.
func TestReadDirPage(t *testing.T) {
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	ctx := context.Background()
	must(t, f.Mkdir(ctx, "d", 0o755))
	names := []string{"a", "b b", "c", "d.txt", "e", "f-1", "f-10", "f-2", "g", "z"}
	for i, n := range names {
		switch i % 3 {
		case 0:
			must(t, f.WriteFile(ctx, "d/"+n, []byte(strings.Repeat("x", i)), 0o644))
		case 1:
			must(t, f.Mkdir(ctx, "d/"+n, 0o700))
		default:
			must(t, f.Symlink(ctx, "target-"+n, "d/"+n))
		}
	}
	all, err := f.ReadDir(ctx, "d")
	must(t, err)
	rapid.Check(t, func(t *rapid.T) {
		after := rapid.SampledFrom(append(names, "", "b", "f-", "zz", "\xff")).Draw(t, "after")
		limit := rapid.IntRange(1, len(names)+2).Draw(t, "limit")
		var want []string
		for _, de := range all {
			if de.Name() > after {
				want = append(want, de.Name())
			}
		}
		var got []string
		for {
			page, more, err := f.ReadDirPage(ctx, "d", after, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > limit || more && len(page) < limit {
				t.Fatalf("page of %d with limit %d, more=%v", len(page), limit, more)
			}
			for _, de := range page {
				got = append(got, de.Name())
				fi, err := de.Info()
				if err != nil {
					t.Fatal(err)
				}
				st, err := f.Lstat(ctx, "d/"+de.Name())
				if err != nil {
					t.Fatal(err)
				}
				if a, b := infoString(fi), infoString(st); a != b {
					t.Fatalf("%s: Info %s, Lstat %s", de.Name(), a, b)
				}
				if de.Type() != fi.Mode().Type() {
					t.Fatalf("%s: type %v, Info %v", de.Name(), de.Type(), fi.Mode().Type())
				}
			}
			if !more {
				break
			}
			after = page[len(page)-1].Name()
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("pages list %q, want %q", got, want)
		}
	})
}

// TestReadDirPageRefuses: a bad limit, a file and a missing directory are
// refused with the sentinel ReadDir uses.
func TestReadDirPageRefuses(t *testing.T) {
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	ctx := context.Background()
	must(t, f.WriteFile(ctx, "file", nil, 0o644))
	for _, c := range []struct {
		name  string
		limit int
		want  error
	}{
		{".", 0, fs.ErrInvalid},
		{".", -1, fs.ErrInvalid},
		{"missing", 10, fs.ErrNotExist},
		{"../escape", 10, fs.ErrInvalid},
	} {
		if _, _, err := f.ReadDirPage(ctx, c.name, "", c.limit); !errors.Is(err, c.want) {
			t.Errorf("ReadDirPage(%q, limit %d) = %v, want %v", c.name, c.limit, err, c.want)
		}
	}
	_, _, errPage := f.ReadDirPage(ctx, "file", "", 10)
	_, errAll := f.ReadDir(ctx, "file")
	if errPage == nil || fmt.Sprint(errPage) != fmt.Sprint(errAll) {
		t.Errorf("ReadDirPage of a file = %v, ReadDir's = %v", errPage, errAll)
	}
}

// infoString is what a FileInfo says, for comparison.
func infoString(fi fs.FileInfo) string {
	return fmt.Sprintf("%s %d %v %v %v", fi.Name(), fi.Size(), fi.Mode(), fi.ModTime().UnixNano(), fi.IsDir())
}

// TestReadDirPageVirtual: a virtual mount's directory pages like a stored
// one, from its provider's listing.
func TestReadDirPageVirtual(t *testing.T) {
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	ctx := context.Background()
	files := fstest.MapFS{}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		files["sub/"+n] = &fstest.MapFile{Data: []byte(n)}
	}
	f.SetHooks(virtualAt{"live", mapVirtual{files}})
	var got []string
	after := ""
	for {
		page, more, err := f.ReadDirPage(ctx, "live/sub", after, 2)
		must(t, err)
		for _, de := range page {
			got = append(got, de.Name())
		}
		if !more {
			break
		}
		after = page[len(page)-1].Name()
	}
	if fmt.Sprint(got) != "[a b c d e]" {
		t.Errorf("pages of the virtual directory list %q", got)
	}
	if page, more, err := f.ReadDirPage(ctx, "live/sub", "c", 10); err != nil || more || len(page) != 2 {
		t.Errorf("the page after c: %d entries, more=%v, %v", len(page), more, err)
	}
}

// virtualAt serves v at the top-level directory root.
type virtualAt struct {
	root string
	v    vfs.Virtual
}

func (h virtualAt) CheckWrite(string, string) error       { return nil }
func (h virtualAt) Changed(string)                        {}
func (h virtualAt) Hydrate(context.Context, string) error { return nil }
func (h virtualAt) Virtual(_ context.Context, name string) (vfs.Virtual, string, bool) {
	if name == h.root {
		return h.v, ".", true
	}
	rel, ok := strings.CutPrefix(name, h.root+"/")
	return h.v, rel, ok
}

// mapVirtual is a vfs.Virtual over an fs.FS.
type mapVirtual struct{ fsys fs.FS }

func (m mapVirtual) Stat(_ context.Context, rel string) (fs.FileInfo, error) {
	return fs.Stat(m.fsys, rel)
}
func (m mapVirtual) ReadDir(_ context.Context, rel string) ([]fs.DirEntry, error) {
	return fs.ReadDir(m.fsys, rel)
}
func (m mapVirtual) ReadFile(_ context.Context, rel string) ([]byte, error) {
	return fs.ReadFile(m.fsys, rel)
}
