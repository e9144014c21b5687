package metatest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// writeEverything writes one row of every kind, tagged with tag.
func writeEverything(tx meta.Tx, tag string) error {
	w := meta.Workspace{ID: "id-" + tag, Name: tag}
	steps := []func() error{
		func() error { return tx.SetSetting("setting-"+tag, tag) },
		func() error { _, err := tx.Allocate("counter-"+tag, 3); return err },
		func() error { return tx.PutNodes([]meta.Object{{Hash: hashOf("node-" + tag), Data: []byte(tag)}}) },
		func() error { return tx.PutInline([]meta.Object{{Hash: hashOf("inline-" + tag), Data: []byte(tag)}}) },
		func() error { return tx.CreateWorkspace(&w) },
		func() error { return tx.CreateCheckpoint(&meta.Checkpoint{ID: "cp-" + tag, WorkspaceID: w.ID}) },
		func() error { return tx.PutStaged(w.ID, []meta.Staged{{Key: []byte(tag), Seq: 1}}) },
	}
	for _, st := range steps {
		if err := st(); err != nil {
			return err
		}
	}
	return nil
}

// presence reports which rows writeEverything(tag) left, as a bit mask
// (0 for none, 127 for all).
func presence(t testing.TB, s meta.Store, tag string) int {
	t.Helper()
	mask := 0
	ctx := context.Background()
	if _, err := s.GetNode(ctx, hashOf("node-"+tag)); err == nil {
		mask |= 1 << 2
	}
	if _, err := s.GetInline(ctx, hashOf("inline-"+tag)); err == nil {
		mask |= 1 << 3
	}
	view(t, s, func(tx meta.Tx) error {
		if _, err := tx.Setting("setting-" + tag); err == nil {
			mask |= 1 << 0
		}
		if _, err := tx.Workspace("id-" + tag); err == nil {
			mask |= 1 << 4
		}
		if _, err := tx.Checkpoint("cp-" + tag); err == nil {
			mask |= 1 << 5
		}
		if rows, err := tx.Staged("id-" + tag); err == nil && len(rows) == 1 {
			mask |= 1 << 6
		}
		return nil
	})
	var first int64
	update(t, s, func(tx meta.Tx) (err error) {
		first, err = tx.Allocate("counter-"+tag, 1)
		return err
	})
	if first != 1 {
		mask |= 1 << 1
	}
	return mask
}

const allRows = 1<<7 - 1

func testUpdateRollback(t *testing.T, s meta.Store) {
	errBoom := errors.New("boom")
	err := s.Update(context.Background(), func(tx meta.Tx) error {
		if err := writeEverything(tx, "failed"); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update returned %v, want fn's error", err)
	}
	if m := presence(t, s, "failed"); m != 0 {
		t.Errorf("failed Update left rows behind (mask %b)", m)
	}
	// A driver error part-way through: the earlier writes of fn go too.
	createWorkspaces(t, s, "taken")
	err = s.Update(context.Background(), func(tx meta.Tx) error {
		if err := tx.SetSetting("setting-partial", "x"); err != nil {
			return err
		}
		return tx.CreateWorkspace(&meta.Workspace{ID: "id-new", Name: "taken"})
	})
	wantErr(t, "Update creating a duplicate", err, fs.ErrExist)
	view(t, s, func(tx meta.Tx) error {
		_, err := tx.Setting("setting-partial")
		wantErr(t, "setting written before the failure", err, fs.ErrNotExist)
		return nil
	})
	update(t, s, func(tx meta.Tx) error { return writeEverything(tx, "ok") })
	if m := presence(t, s, "ok"); m != allRows {
		t.Errorf("successful Update left mask %b, want %b", m, allRows)
	}
}

// updateRecover runs Update and returns the value fn panicked with, or
// Update's error.
func updateRecover(s meta.Store, fn func(meta.Tx) error) (panicked any, err error) {
	defer func() { panicked = recover() }()
	return nil, s.Update(context.Background(), fn)
}

func testUpdatePanic(t *testing.T, s meta.Store) {
	func() {
		defer func() {
			if v := recover(); v != "fn panicked" {
				t.Errorf("recovered %v, want fn's panic value", v)
			}
		}()
		s.Update(context.Background(), func(tx meta.Tx) error {
			if err := writeEverything(tx, "panicked"); err != nil {
				return err
			}
			panic("fn panicked")
		})
	}()
	if m := presence(t, s, "panicked"); m != 0 {
		t.Errorf("panicking Update left rows behind (mask %b)", m)
	}
	update(t, s, func(tx meta.Tx) error { return writeEverything(tx, "after") })
}

// testUpdateConcurrent runs many Updates at once, half of them failing
// after writing (with their own error, a driver error or a panic): each
// caller gets its own outcome, and exactly the successful ones are stored.
// A group-committing driver batches them, so this checks that a failing fn
// is rolled back alone.
func testUpdateConcurrent(t *testing.T, s meta.Store) {
	const goroutines, per = 12, 8
	createWorkspaces(t, s, "taken")
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range per {
				tag := fmt.Sprintf("g%d-%d", g, i)
				own := fmt.Errorf("fail %s", tag)
				panicked, err := updateRecover(s, func(tx meta.Tx) error {
					if err := writeEverything(tx, tag); err != nil {
						return err
					}
					switch (g + i) % 6 {
					case 0:
						return own
					case 3:
						return tx.CreateWorkspace(&meta.Workspace{ID: "id-x-" + tag, Name: "taken"})
					case 5:
						panic(own)
					}
					return nil
				})
				switch (g + i) % 6 {
				case 5:
					if panicked != own {
						t.Errorf("%s: recovered %v, want its own panic", tag, panicked)
					}
				case 0:
					if !errors.Is(err, own) {
						t.Errorf("%s: got %v, want its own error", tag, err)
					}
				case 3:
					if !errors.Is(err, fs.ErrExist) {
						t.Errorf("%s: got %v, want fs.ErrExist", tag, err)
					}
				default:
					if err != nil {
						t.Errorf("%s: %v", tag, err)
					}
				}
			}
		})
	}
	// Readers run beside the writers.
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := s.View(context.Background(), func(tx meta.Tx) error {
					_, err := tx.Workspaces()
					return err
				}); err != nil {
					t.Errorf("View beside Updates: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	for g := range goroutines {
		for i := range per {
			tag := fmt.Sprintf("g%d-%d", g, i)
			want := allRows
			if (g+i)%3 == 0 || (g+i)%6 == 5 {
				want = 0
			}
			if m := presence(t, s, tag); m != want {
				t.Errorf("%s: rows mask %b, want %b", tag, m, want)
			}
		}
	}
}

// testViewIsolation commits an Update while a View is open: the View keeps
// seeing the snapshot of its first read, across tables.
func testViewIsolation(t *testing.T, s meta.Store) {
	createWorkspaces(t, s, "w")
	update(t, s, func(tx meta.Tx) error {
		if err := tx.SetSetting("a", "1"); err != nil {
			return err
		}
		return tx.SetSetting("b", "1")
	})
	view(t, s, func(tx meta.Tx) error {
		if v, err := tx.Setting("a"); err != nil || v != "1" {
			t.Errorf("first read = %q, %v", v, err)
		}
		done := make(chan error)
		go func() {
			done <- s.Update(context.Background(), func(tx meta.Tx) error {
				for _, k := range []string{"a", "b"} {
					if err := tx.SetSetting(k, "2"); err != nil {
						return err
					}
				}
				if err := tx.SetRoot("id-w", hashOf("new")); err != nil {
					return err
				}
				return tx.PutStaged("id-w", []meta.Staged{{Key: []byte("k"), Seq: 1}})
			})
		}()
		if err := <-done; err != nil {
			t.Errorf("Update during View: %v", err)
		}
		for _, k := range []string{"a", "b"} {
			if v, err := tx.Setting(k); err != nil || v != "1" {
				t.Errorf("View read %q = %q, %v after a concurrent commit; want the snapshot's 1", k, v, err)
			}
		}
		if w, err := tx.Workspace("id-w"); err != nil || !w.Root.IsZero() {
			t.Errorf("View saw a concurrent SetRoot: %+v, %v", w, err)
		}
		if rows, err := tx.Staged("id-w"); err != nil || len(rows) != 0 {
			t.Errorf("View saw concurrent staging rows: %v, %v", rows, err)
		}
		return nil
	})
	view(t, s, func(tx meta.Tx) error {
		if v, err := tx.Setting("b"); err != nil || v != "2" {
			t.Errorf("a new View reads %q, %v; want 2", v, err)
		}
		return nil
	})
}

// testTxAfterReturn uses a Tx after its Update returned: the call fails
// and changes nothing.
func testTxAfterReturn(t *testing.T, s meta.Store) {
	var leaked meta.Tx
	update(t, s, func(tx meta.Tx) error { leaked = tx; return tx.SetSetting("k", "before") })
	if err := leaked.SetSetting("k", "after"); err == nil {
		t.Error("SetSetting on a finished Tx succeeded")
	}
	view(t, s, func(tx meta.Tx) error {
		if v, err := tx.Setting("k"); err != nil || v != "before" {
			t.Errorf("after a write through a finished Tx: %q, %v; want before", v, err)
		}
		return nil
	})
}

func testViewReadOnly(t *testing.T, s meta.Store) {
	createWorkspaces(t, s, "w")
	writes := map[string]func(meta.Tx) error{
		"SetSetting": func(tx meta.Tx) error { return tx.SetSetting("k", "v") },
		"Allocate":   func(tx meta.Tx) error { _, err := tx.Allocate("c", 1); return err },
		"PutNodes":   func(tx meta.Tx) error { return tx.PutNodes([]meta.Object{{Hash: hashOf("n"), Data: []byte("n")}}) },
		"CreateWorkspace": func(tx meta.Tx) error {
			return tx.CreateWorkspace(&meta.Workspace{ID: "id-v", Name: "v"})
		},
		"SetRoot":         func(tx meta.Tx) error { return tx.SetRoot("id-w", hashOf("r")) },
		"DeleteWorkspace": func(tx meta.Tx) error { return tx.DeleteWorkspace("id-w") },
		"PutStaged": func(tx meta.Tx) error {
			return tx.PutStaged("id-w", []meta.Staged{{Key: []byte("k"), Seq: 1}})
		},
	}
	for name, fn := range writes {
		err := s.View(context.Background(), fn)
		wantErr(t, name+" in a View", err, errdefs.ErrReadOnly)
	}
	view(t, s, func(tx meta.Tx) error {
		if _, err := tx.Setting("k"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a write in a View took effect: %v", err)
		}
		if w, err := tx.Workspace("id-w"); err != nil || !w.Root.IsZero() {
			t.Errorf("a write in a View took effect: %+v, %v", w, err)
		}
		return nil
	})
}

func testCanceled(t *testing.T, s meta.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	err := s.Update(ctx, func(tx meta.Tx) error { ran = true; return tx.SetSetting("k", "v") })
	wantErr(t, "Update with a canceled context", err, context.Canceled)
	if ran {
		t.Error("Update ran fn with a canceled context")
	}
	err = s.View(ctx, func(tx meta.Tx) error { _, err := tx.Setting("k"); return err })
	if err == nil {
		t.Error("View with a canceled context succeeded")
	}
}

func testNow(t *testing.T, s meta.Store) {
	var prev time.Time
	for range 20 {
		var now time.Time
		update(t, s, func(tx meta.Tx) (err error) {
			now, err = tx.Now()
			return err
		})
		if !closeTo(now, time.Now(), time.Minute) {
			t.Fatalf("Now() = %v, far from the local clock %v", now, time.Now())
		}
		if now.Before(prev) {
			t.Fatalf("Now() went back from %v to %v", prev, now)
		}
		prev = now
	}
	view(t, s, func(tx meta.Tx) error {
		now, err := tx.Now()
		if err != nil || now.Before(prev) {
			t.Errorf("Now() in a View = %v, %v; want at or after %v", now, err, prev)
		}
		return nil
	})
}

// testCollectionClock: the collector's clock read (meta.GCTx) waits for
// an Update in flight, and what that Update stamped is before it; in a
// View it is refused. (A driver that returned the clock at once would let
// a write stamped before T0 commit after the collector's snapshot, which
// then misses it: the collector would delete a node a committed head
// references.)
func testCollectionClock(t *testing.T, s meta.Store) {
	ctx := context.Background()
	node := meta.Object{Hash: hashOf("stamped before T0"), Data: []byte("n")}
	inside, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	wrote := make(chan error, 1)
	go func() {
		wrote <- s.Update(ctx, func(tx meta.Tx) error {
			if err := tx.PutNodes([]meta.Object{node}); err != nil {
				return err
			}
			once.Do(func() { close(inside) })
			<-release
			return nil
		})
	}()
	<-inside
	type reading struct {
		t0  time.Time
		err error
	}
	read := make(chan reading, 1)
	go func() {
		var r reading
		r.err = s.Update(ctx, func(tx meta.Tx) (err error) {
			r.t0, err = tx.CollectionClock()
			return err
		})
		read <- r
	}()
	select {
	case r := <-read:
		close(release)
		<-wrote
		t.Fatalf("CollectionClock returned (%v, %v) while an Update was in flight", r.t0, r.err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	r := <-read
	if r.err != nil {
		t.Fatal(r.err)
	}
	view(t, s, func(tx meta.Tx) error {
		return tx.Nodes(func(o meta.ObjectInfo) error {
			if o.Hash == node.Hash && !o.TouchedAt.Before(r.t0) {
				t.Errorf("a node stamped %v by an Update in flight, collection clock %v", o.TouchedAt, r.t0)
			}
			return nil
		})
	})
	err := s.View(ctx, func(tx meta.Tx) error {
		_, err := tx.CollectionClock()
		return err
	})
	wantErr(t, "CollectionClock in a View", err, errdefs.ErrReadOnly)
}

func testClosed(t *testing.T, s meta.Store) {
	update(t, s, func(tx meta.Tx) error {
		return tx.PutNodes([]meta.Object{{Hash: hashOf("n"), Data: []byte("n")}})
	})
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ctx := context.Background()
	calls := map[string]func() error{
		"View":      func() error { return s.View(ctx, func(meta.Tx) error { return nil }) },
		"Update":    func() error { return s.Update(ctx, func(meta.Tx) error { return nil }) },
		"GetNode":   func() error { _, err := s.GetNode(ctx, hashOf("n")); return err },
		"GetInline": func() error { _, err := s.GetInline(ctx, hashOf("n")); return err },
		"GetInlines": func() error {
			return s.GetInlines(ctx, []cas.Hash{hashOf("n")}, func(cas.Hash, []byte) error { return nil })
		},
		"Close": s.Close,
	}
	for name, call := range calls {
		wantErr(t, name+" after Close", call(), fs.ErrClosed)
	}
}

// testCloseDuringUpdates closes the store while Updates are queued and
// reads run: each returns a result (it finished before Close) or
// fs.ErrClosed, and none hangs.
func testCloseDuringUpdates(t *testing.T, s meta.Store) {
	update(t, s, func(tx meta.Tx) error {
		return tx.PutNodes([]meta.Object{{Hash: hashOf("n"), Data: []byte("n")}})
	})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				_, err := s.GetNode(context.Background(), hashOf("n"))
				if err == nil {
					err = s.View(context.Background(), func(tx meta.Tx) error { _, err := tx.Workspaces(); return err })
				}
				if err != nil && !errors.Is(err, fs.ErrClosed) {
					t.Errorf("read racing Close: %v", err)
				}
			}
		})
	}
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				err := s.Update(context.Background(), func(tx meta.Tx) error {
					return tx.SetSetting(fmt.Sprintf("k%d-%d", g, i), "v")
				})
				if err != nil && !errors.Is(err, fs.ErrClosed) {
					t.Errorf("Update racing Close: %v", err)
				}
			}
		})
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close with Updates queued: %v", err)
	}
	wg.Wait()
}
