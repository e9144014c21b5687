package vfs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/fstest"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// TestReadFiles reads inline, chunked and empty files, links, a stub, a
// virtual mount's file and names that cannot be read in one call: each
// gets exactly what ReadFile gets.
func TestReadFiles(t *testing.T) {
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	ctx := context.Background()
	must(t, f.MkdirAll(ctx, "d/sub", 0o755))
	names := []string{
		"d/small", "d/empty", "d/large", "d/sub/small2", "d/twin", // files
		"d/link", "d/sub/uplink", "d/dangling", // links
		"mnt/x/stub", "live/v", // a stub, a virtual file
		"d", "d/missing", "d/small/below", "../out", "", // not readable
	}
	must(t, f.WriteFile(ctx, "d/small", []byte("small body"), 0o644))
	must(t, f.WriteFile(ctx, "d/empty", nil, 0o644))
	must(t, f.WriteFile(ctx, "d/large", bytes.Repeat([]byte("large body "), 20_000), 0o644))
	must(t, f.WriteFile(ctx, "d/sub/small2", []byte("another body"), 0o600))
	must(t, f.WriteFile(ctx, "d/twin", []byte("small body"), 0o644))
	must(t, f.Symlink(ctx, "small", "d/link"))
	must(t, f.Symlink(ctx, "../large", "d/sub/uplink"))
	must(t, f.Symlink(ctx, "nowhere", "d/dangling"))
	must(t, f.Populate(ctx, "mnt/x", []vfs.Item{{Path: "stub", Mode: 0o644, Stub: true, Size: 5, Xattrs: map[string][]byte{vfs.StubAttr: []byte("m")}}}))
	h := &hydrating{virtualAt: virtualAt{"live", mapVirtual{fstest.MapFS{"v": &fstest.MapFile{Data: []byte("live bytes")}}}}, f: f}
	f.SetHooks(h)

	got := readFiles(t, f, names)
	if h.hydrated != 1 {
		t.Errorf("the stub was hydrated %d times, want once", h.hydrated)
	}
	for i, name := range names {
		data, err := f.ReadFile(ctx, name)
		if fmt.Sprint(got[i].err) != fmt.Sprint(err) || !bytes.Equal(got[i].data, data) {
			t.Errorf("%q: ReadFiles = %d bytes, %v; ReadFile = %d bytes, %v", name, len(got[i].data), got[i].err, len(data), err)
		}
	}
	if string(got[8].data) != "hello" || string(got[9].data) != "live bytes" {
		t.Errorf("stub and virtual file read %q and %q", got[8].data, got[9].data)
	}
}

// TestReadFilesMissingBody: an inline body gone from the store is damage
// (errdefs.ErrCorrupt) for its file alone.
func TestReadFilesMissingBody(t *testing.T) {
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	ctx := context.Background()
	must(t, f.WriteFile(ctx, "a", []byte("kept"), 0o644))
	must(t, f.WriteFile(ctx, "b", []byte("lost"), 0o644))
	must(t, e.deps.Meta.Update(ctx, func(tx meta.Tx) error {
		_, err := tx.DeleteInline([]cas.Hash{cas.Sum([]byte("lost"))}, time.Now().Add(time.Hour))
		return err
	}))
	f = e.reopen(f) // a cold cache
	got := readFiles(t, f, []string{"a", "b"})
	if string(got[0].data) != "kept" || got[0].err != nil {
		t.Errorf("a: %q, %v", got[0].data, got[0].err)
	}
	if !errors.Is(got[1].err, errdefs.ErrCorrupt) {
		t.Errorf("b: %v, want errdefs.ErrCorrupt", got[1].err)
	}
}

// TestReadFilesIn reads names relative to directories — nested, through
// a link, missing, not a directory — including links out of the
// directory, names in one subdirectory after another (resolved once) and
// names that cannot be read: each gets what ReadFile of dir/name gets.
func TestReadFilesIn(t *testing.T) {
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	ctx := context.Background()
	must(t, f.MkdirAll(ctx, "d/sub", 0o755))
	must(t, f.WriteFile(ctx, "d/small", []byte("small body"), 0o644))
	must(t, f.WriteFile(ctx, "d/large", bytes.Repeat([]byte("large body "), 20_000), 0o644))
	must(t, f.WriteFile(ctx, "d/sub/small2", []byte("another body"), 0o600))
	must(t, f.Symlink(ctx, "../large", "d/sub/uplink"))
	must(t, f.Symlink(ctx, "/d/small", "d/sub/abslink"))
	must(t, f.Symlink(ctx, "d/sub", "sublink"))
	names := []string{
		"small", "large", "small2", "uplink", "abslink", "sub", "missing", "sub/small2", "../d/small", "",
		"sub/uplink", "sub/abslink", "sub/missing", "small/x", "small/y", "missing/x", "missing/y", "sub/small2",
	}
	for _, dir := range []string{".", "d", "d/sub", "sublink", "d/missing", "d/small"} {
		got := readFilesIn(t, f, dir, names)
		for i, name := range names {
			p := dir + "/" + name
			if dir == "." {
				p = name
			}
			data, err := f.ReadFile(ctx, p)
			if fmt.Sprint(got[i].err) != fmt.Sprint(err) || !bytes.Equal(got[i].data, data) {
				t.Errorf("%q in %q: ReadFilesIn = %d bytes, %v; ReadFile = %d bytes, %v", name, dir, len(got[i].data), got[i].err, len(data), err)
			}
		}
	}
}

type readResult struct {
	data []byte
	err  error
}

// readFiles calls f.ReadFiles and checks that it reports every name once,
// in order.
func readFiles(t *testing.T, f *vfs.FS, names []string) []readResult {
	t.Helper()
	return readFilesWith(t, f.ReadFiles, names)
}

// readFilesIn is readFiles of f.ReadFilesIn in dir.
func readFilesIn(t *testing.T, f *vfs.FS, dir string, names []string) []readResult {
	t.Helper()
	return readFilesWith(t, func(ctx context.Context, names []string, fn func(int, []byte, error) error) error {
		return f.ReadFilesIn(ctx, dir, names, fn)
	}, names)
}

// readFilesWith calls read (ReadFiles or ReadFilesIn) and checks that it
// reports every name once, in order.
func readFilesWith(t *testing.T, read func(context.Context, []string, func(int, []byte, error) error) error, names []string) []readResult {
	t.Helper()
	var got []readResult
	err := read(context.Background(), names, func(i int, data []byte, err error) error {
		if i != len(got) {
			t.Fatalf("file %d reported after %d others", i, len(got))
		}
		got = append(got, readResult{data, err})
		return nil
	})
	if err != nil || len(got) != len(names) {
		t.Fatalf("ReadFiles: %v after %d of %d files", err, len(got), len(names))
	}
	return got
}

// hydrating is virtualAt whose Hydrate fills stubs with "hello".
type hydrating struct {
	virtualAt
	f        *vfs.FS
	hydrated int
}

func (h *hydrating) Hydrate(ctx context.Context, name string) error {
	h.hydrated++
	return h.f.FillStub(ctx, name, []byte("m"), []byte("hello"))
}
