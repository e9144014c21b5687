package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
	"github.com/forkspace/forkspace/vfs/vfstest"
)

// faultyMeta is a real metadata store whose Update fails on demand.
type faultyMeta struct {
	meta.Store
	fail atomic.Bool
}

var errInjected = errors.New("injected failure")

func (m *faultyMeta) Update(ctx context.Context, fn func(meta.Tx) error) error {
	if m.fail.Load() {
		return errInjected
	}
	return m.Store.Update(ctx, fn)
}

// TestCommitFailure: mutations whose transaction fails are invisible, as
// are those computed on top of them, while concurrent successful ones are
// durable; the live state afterwards equals what a restart sees.
func TestCommitFailure(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{FoldRows: 30})
	fm := &faultyMeta{Store: e.deps.Meta}
	e.deps.Meta = fm
	f := e.open(e.ws)
	must(t, f.Mkdir(ctx, "d", 0o755))

	fm.fail.Store(true)
	vfstest.IsPathErr(t, f.WriteFile(ctx, "d/x", []byte("x"), 0o644), errInjected)
	fm.fail.Store(false)
	if _, err := f.Stat(ctx, "d/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("failed write visible: %v", err)
	}

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		wrote = map[string]bool{}
	)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				if w == 0 && i%10 == 5 {
					fm.fail.Store(i%20 == 5)
				}
				name := fmt.Sprintf("d/w%d-%d", w, i)
				err := f.WriteFile(ctx, name, []byte(name), 0o644)
				if err != nil && !errors.Is(err, errInjected) {
					t.Error(err)
				}
				mu.Lock()
				wrote[name] = err == nil
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	fm.fail.Store(false)
	ok := 0
	for name, durable := range wrote {
		_, err := f.Stat(ctx, name)
		if durable != (err == nil) {
			t.Fatalf("%s: write succeeded %v, stat %v", name, durable, err)
		}
		if durable {
			ok++
		}
	}
	if ok == 0 || ok == len(wrote) {
		t.Fatalf("%d of %d writes succeeded; want some of each", ok, len(wrote))
	}
	want := vfstest.Dump(t, f)
	e.deps.Meta = fm.Store
	vfstest.Equal(t, want, vfstest.Dump(t, e.reopen(f)))
}

// TestFlushCommitsAndKeepsOpen: Flush makes a handle's buffered writes
// visible to other readers without closing it, and later writes of the
// handle commit at Close.
func TestFlushCommitsAndKeepsOpen(t *testing.T) {
	ctx := context.Background()
	f := newFS(t)
	h, err := f.OpenFile(ctx, "a", vfs.O_RDWR|vfs.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write([]byte("one")); err != nil {
		t.Fatal(err)
	}
	if b, err := f.ReadFile(ctx, "a"); err != nil || len(b) != 0 {
		t.Fatalf("before Flush: %q, %v; want empty", b, err)
	}
	if err := h.Flush(); err != nil {
		t.Fatal(err)
	}
	if b, err := f.ReadFile(ctx, "a"); err != nil || string(b) != "one" {
		t.Fatalf("after Flush: %q, %v", b, err)
	}
	if _, err := h.Write([]byte("two")); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := f.ReadFile(ctx, "a"); err != nil || string(b) != "onetwo" {
		t.Fatalf("after Close: %q, %v", b, err)
	}
	if err := h.Flush(); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("Flush after Close = %v, want fs.ErrClosed", err)
	}
}
