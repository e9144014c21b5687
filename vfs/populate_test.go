package vfs_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"testing"
	"time"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

func TestPopulate(t *testing.T) {
	ctx := context.Background()
	f := newFS(t)
	mt := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	err := f.Populate(ctx, "mnt/x", []vfs.Item{
		{Path: "a/b.txt", Mode: 0o640, ModTime: mt, Data: []byte("bytes")},
		{Path: "stub", Mode: 0o644, Stub: true, Size: 5, Xattrs: map[string][]byte{vfs.StubAttr: []byte("m")}},
		{Path: "d", Mode: fs.ModeDir | 0o700},
		{Path: "l", Mode: fs.ModeSymlink, Target: "a/b.txt"},
		{Path: ".", Keep: true, Xattrs: map[string][]byte{"user.k": []byte("v")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := f.ReadFile(ctx, "mnt/x/l"); err != nil || string(b) != "bytes" {
		t.Fatalf("read through link: %q %v", b, err)
	}
	fi, err := f.Stat(ctx, "mnt/x/a/b.txt")
	if err != nil || !fi.ModTime().Equal(mt) || fi.Mode() != 0o640 {
		t.Fatalf("stat: %v %v", fi, err)
	}
	if fi, _ := f.Stat(ctx, "mnt/x/stub"); fi.Size() != 5 {
		t.Fatalf("stub size %d", fi.Size())
	}
	if v, err := f.Getxattr(ctx, "mnt/x", "user.k"); err != nil || string(v) != "v" {
		t.Fatalf("keep xattr: %q %v", v, err)
	}
	// Fill the stub; a wrong marker does nothing.
	if err := f.FillStub(ctx, "mnt/x/stub", []byte("other"), []byte("WRONG")); err != nil {
		t.Fatal(err)
	}
	if err := f.FillStub(ctx, "mnt/x/stub", []byte("m"), []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if b, _ := f.ReadFile(ctx, "mnt/x/stub"); string(b) != "hello" {
		t.Fatalf("filled: %q", b)
	}
	if _, err := f.Getxattr(ctx, "mnt/x/stub", vfs.StubAttr); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("marker stays: %v", err)
	}
	// Replace and remove; a failure changes nothing.
	err = f.Populate(ctx, "mnt/x", []vfs.Item{{Path: "d", Remove: true}, {Path: "a", Mode: 0o644, Data: []byte("file now")}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := f.ReadFile(ctx, "mnt/x/a"); string(b) != "file now" {
		t.Fatalf("replaced: %q", b)
	}
	if _, err := f.Stat(ctx, "mnt/x/d"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("removed: %v", err)
	}
	err = f.Populate(ctx, "mnt/x", []vfs.Item{{Path: "new", Data: []byte("x")}, {Path: "a/under-file", Data: []byte("y")}})
	if !errors.Is(err, errdefs.ErrNotDir) {
		t.Fatalf("populate under a file: %v", err)
	}
	if _, err := f.Stat(ctx, "mnt/x/new"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("failed populate left new: %v", err)
	}
}

func TestPopulateQuota(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{Quota: meta.Quota{MaxEntries: 3}})
	f := e.open(e.ws)
	err := f.Populate(ctx, "m", []vfs.Item{{Path: "a", Stub: true, Size: 1}, {Path: "b", Stub: true, Size: 1}, {Path: "c", Stub: true, Size: 1}})
	if !errors.Is(err, errdefs.ErrQuota) {
		t.Fatalf("over quota: %v", err)
	}
}

// TestStoreFrom stores a stream of several chunks ahead of the mutation
// that names it, and refuses one larger than the whole byte quota.
func TestStoreFrom(t *testing.T) {
	ctx := context.Background()
	f := newFS(t)
	data := make([]byte, 3<<20+7)
	for i := range data {
		data[i] = byte(i*7 + i>>11)
	}
	st, err := f.StoreFrom(ctx, "big", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.WriteStored(ctx, "big", st, 0o640); err != nil {
		t.Fatal(err)
	}
	if got, err := f.ReadFile(ctx, "big"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, %v; want %d", len(got), err, len(data))
	}

	e := newEnv(t, vfs.Options{Quota: meta.Quota{MaxBytes: 1 << 20}})
	q := e.open(e.ws)
	if _, err := q.StoreFrom(ctx, "big", bytes.NewReader(data)); !errors.Is(err, errdefs.ErrQuota) {
		t.Fatalf("stream over the quota: %v", err)
	}
}
