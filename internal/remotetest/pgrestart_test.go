package remotetest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/internal/pgtest"
	"github.com/forkspace/forkspace/internal/s3test"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/pgmeta"
)

// TestPostgresRestart kills PostgreSQL (an immediate shutdown, as a
// crash) and starts it again under a store taking a stream of writes from
// four writers, with one metadata transaction held open across the
// restart. Writes in flight fail or succeed, never half: the held
// transaction either committed whole or left nothing; the store takes
// writes again without being reopened (the pool reconnects); every write
// that returned nil reads back, in the same store and after reopening
// it; a write that failed left its file absent or whole; fsck is clean.
// The store is one process's own (blobs in a directory), then one of two
// processes sharing it (Options.Shared, blobs in versitygw), where the
// other process, which had the workspace open across the restart, reads
// what the first acknowledged.
func TestPostgresRestart(t *testing.T) {
	t.Run("exclusive", func(t *testing.T) {
		srv := pgtest.Own(t)
		url, dir := srv.DB(t), t.TempDir()
		restartUnderWrites(t, srv, func() (*forkspace.Store, meta.Store) {
			m, err := pgmeta.Open(context.Background(), url, pgmeta.Options{Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			return openStore(t, forkspace.Options{Dir: dir, Meta: m}), m
		}, nil)
	})
	t.Run("shared", func(t *testing.T) {
		srv := pgtest.Own(t)
		url := srv.DB(t)
		v := s3test.StartVersity(t, "restart")
		open := func() (*forkspace.Store, meta.Store) {
			m, err := pgmeta.Open(context.Background(), url, pgmeta.Options{Logger: quiet, Shared: true})
			if err != nil {
				t.Fatal(err)
			}
			return openStore(t, forkspace.Options{Dir: t.TempDir(), Meta: m, Blobs: bucketBlobs(t, v, "restart", "p"), Shared: true}), m
		}
		other, _ := open()
		defer other.Close()
		restartUnderWrites(t, srv, open, other)
	})
}

// openStore opens a store with the tests' small inline limit.
func openStore(t *testing.T, o forkspace.Options) *forkspace.Store {
	t.Helper()
	o.Logger, o.InlineMax = quiet, 512
	st, err := forkspace.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// restartUnderWrites restarts srv under writes to the store open returns
// (see TestPostgresRestart); other, if set, is another process sharing
// the store, which opens the workspace before the restart and must read
// what was acknowledged after it.
func restartUnderWrites(t *testing.T, srv *pgtest.Server, open func() (*forkspace.Store, meta.Store), other *forkspace.Store) {
	ctx := context.Background()
	st, m := open()
	w, err := st.Create(ctx, "w", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if other != nil {
		if _, err := other.Workspace(ctx, "w"); err != nil {
			t.Fatal(err)
		}
	}
	content := func(i int) []byte {
		if i%5 == 0 {
			return random(uint64(i), 2000) // a blob
		}
		return []byte(fmt.Sprintf("file %d\n", i)) // inline
	}
	const before, after = 100, 200 // acknowledged writes wanted on each side of the restart
	var (
		mu        sync.Mutex
		next      int
		acked     = map[int]bool{}
		failed    = map[int]error{}
		ackedPost int
		restarted bool
		ready     = make(chan struct{}) // closed at `before` acknowledged writes
	)
	writer := func() {
		for {
			mu.Lock()
			next++
			i := next
			mu.Unlock()
			err := w.WriteFile(ctx, fmt.Sprintf("f%05d", i), content(i), 0o644)
			mu.Lock()
			if err == nil {
				acked[i] = true
				if len(acked) == before {
					close(ready)
				}
				if restarted {
					ackedPost++
				}
			} else {
				failed[i] = err
			}
			done := (restarted && ackedPost >= after) || next > 50000
			mu.Unlock()
			if done {
				return
			}
		}
	}

	// A transaction held open across the restart.
	held, resume, heldDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		first := true
		heldDone <- m.Update(ctx, func(tx meta.Tx) error {
			for _, k := range []string{"restart-1", "restart-2"} {
				if err := tx.SetSetting(k, "whole"); err != nil {
					return err
				}
			}
			if first {
				first = false
				close(held)
				<-resume
			}
			return nil
		})
	}()
	<-held
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(writer)
	}
	<-ready
	srv.Restart(t)
	mu.Lock()
	restarted = true
	mu.Unlock()
	close(resume)
	heldErr := <-heldDone
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d writes acknowledged (%d after the restart), %d failed; the held transaction: %v", len(acked), ackedPost, len(failed), heldErr)
	if ackedPost < after {
		t.Fatalf("only %d writes succeeded after the restart (of %d tried): the store did not recover without reopening; last error: %v", ackedPost, next, lastErr(failed))
	}
	settingsWhole := func(m meta.Store) {
		t.Helper()
		var got []string
		err := m.View(ctx, func(tx meta.Tx) error {
			for _, k := range []string{"restart-1", "restart-2"} {
				if v, err := tx.Setting(k); err == nil {
					got = append(got, v)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 0, false: 2}[heldErr != nil]; len(got) != want {
			t.Errorf("the held transaction returned %v and left %d of its 2 settings", heldErr, len(got))
		}
	}
	check := func(st *forkspace.Store, when string) {
		t.Helper()
		w, err := st.Workspace(ctx, "w")
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= next; i++ {
			got, err := w.ReadFile(ctx, fmt.Sprintf("f%05d", i))
			switch {
			case acked[i] && (err != nil || string(got) != string(content(i))):
				t.Errorf("%s: acknowledged f%05d reads %d bytes, %v", when, i, len(got), err)
			case !acked[i] && err == nil && string(got) != string(content(i)):
				t.Errorf("%s: failed write f%05d left %d bytes", when, i, len(got))
			}
		}
		if c, err := st.Check(ctx); err != nil || !c.Clean() {
			t.Errorf("%s: fsck: %v %+v", when, err, c)
		}
	}
	settingsWhole(m)
	check(st, "in the store that lived through the restart")
	if other != nil {
		check(other, "in the other process")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, m = open()
	defer st.Close()
	settingsWhole(m)
	check(st, "after reopening")
}

func lastErr(failed map[int]error) error {
	last := 0
	for i := range failed {
		last = max(last, i)
	}
	return failed[last]
}
