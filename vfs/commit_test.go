package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// TestWithCommit: the work a context carries runs in the transaction of
// the next mutation committed under it, after its rows (a state recorded
// there holds them), once; done follows the commit; a failed commit
// passes it to the retry; a Batch carries it into its own commit.
func TestWithCommit(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{})
	fm := &faultyMeta{Store: e.deps.Meta}
	e.deps.Meta = fm
	f := e.open(e.ws)
	must(t, f.WriteFile(ctx, "a", []byte("a"), 0o644))

	// recordState appends an audit entry and records the workspace's
	// state as its own, returning how many staging rows that state holds.
	recordState := func(tx meta.Tx) (int64, error) {
		ae := meta.AuditEntry{Tool: "test"}
		if err := tx.AppendAudit(&ae); err != nil {
			return 0, err
		}
		return ae.Seq, tx.RecordState(ae.Seq, e.ws.ID, time.Now())
	}
	stateRows := func(seq int64) int {
		var n int
		err := fm.View(ctx, func(tx meta.Tx) error {
			rows, err := tx.StateStaged(seq)
			n = len(rows)
			return err
		})
		must(t, err)
		return n
	}
	var before int64
	must(t, fm.Update(ctx, func(tx meta.Tx) (err error) { before, err = recordState(tx); return err }))

	var (
		runs, dones int
		seq         int64
	)
	work := func(tx meta.Tx) (err error) {
		runs++
		seq, err = recordState(tx)
		return err
	}
	done := func() { dones++ }
	wctx := vfs.WithCommit(ctx, work, done)
	fm.fail.Store(true)
	vfstest.IsPathErr(t, f.WriteFile(wctx, "b", []byte("b"), 0o644), errInjected)
	fm.fail.Store(false)
	if runs != 0 || dones != 0 {
		t.Fatalf("after a failed commit: %d runs, %d dones; want none", runs, dones)
	}
	must(t, f.WriteFile(wctx, "b", []byte("b"), 0o644))
	if runs != 1 || dones != 1 {
		t.Fatalf("after the retry: %d runs, %d dones; want 1, 1", runs, dones)
	}
	if n, m := stateRows(before), stateRows(seq); m <= n {
		t.Errorf("the state recorded with the write holds %d staging rows, the one before it %d: the write's rows were not written first", m, n)
	}
	must(t, f.WriteFile(wctx, "c", []byte("c"), 0o644))
	if runs != 1 || dones != 1 {
		t.Errorf("a second mutation under the context ran the work again: %d runs, %d dones", runs, dones)
	}

	// A Batch: the work runs in the batch's commit, once.
	runs, dones = 0, 0
	bctx := vfs.WithCommit(ctx, work, done)
	err := f.Batch(ctx, func(b *vfs.FS) error {
		must(t, b.WriteFile(bctx, "d", []byte("d"), 0o644))
		must(t, b.WriteFile(bctx, "e", []byte("e"), 0o644))
		if runs != 0 || dones != 0 {
			t.Errorf("inside the batch: %d runs, %d dones; want none before its commit", runs, dones)
		}
		return nil
	})
	must(t, err)
	if runs != 1 || dones != 1 {
		t.Errorf("after the batch: %d runs, %d dones; want 1, 1", runs, dones)
	}
	// A failing batch lets the work go to the next mutation.
	runs, dones = 0, 0
	bctx = vfs.WithCommit(ctx, work, done)
	boom := errors.New("boom")
	if err := f.Batch(ctx, func(b *vfs.FS) error {
		must(t, b.WriteFile(bctx, "f", []byte("f"), 0o644))
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("Batch = %v, want %v", err, boom)
	}
	must(t, f.WriteFile(bctx, "f", []byte("f"), 0o644))
	if runs != 1 || dones != 1 {
		t.Errorf("after a failed batch and a write: %d runs, %d dones; want 1, 1", runs, dones)
	}
	// An operation that changes nothing commits nothing.
	runs, dones = 0, 0
	must(t, f.MkdirAll(vfs.WithCommit(ctx, work, done), ".", 0o755))
	if runs != 0 || dones != 0 {
		t.Errorf("MkdirAll of the root: %d runs, %d dones; want none", runs, dones)
	}
}
