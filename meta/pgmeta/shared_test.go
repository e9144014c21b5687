package pgmeta_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/internal/pgtest"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/pgmeta"
)

func openWith(t *testing.T, url string, opts pgmeta.Options) (*pgmeta.Store, error) {
	t.Helper()
	opts.Logger = quiet
	s, err := pgmeta.Open(context.Background(), url, opts)
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

// TestSharedAndExclusive: any number of shared users open one database
// at once; an exclusive one is refused while any is open, and a shared
// one while an exclusive one is.
func TestSharedAndExclusive(t *testing.T) {
	url := pgtest.DB(t)
	if _, err := openWith(t, url, pgmeta.Options{Shared: true, Exclusive: true}); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Shared and Exclusive together: %v, want fs.ErrInvalid", err)
	}
	a, err := openWith(t, url, pgmeta.Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openWith(t, url, pgmeta.Options{Shared: true}); err != nil {
		t.Fatalf("a second shared user: %v", err)
	}
	if _, err := openWith(t, url, pgmeta.Options{Exclusive: true}); !errors.Is(err, errdefs.ErrBusy) {
		t.Errorf("exclusive beside shared users: %v, want ErrBusy", err)
	}
	a.Close()
	url2 := pgtest.DB(t)
	if _, err := openWith(t, url2, pgmeta.Options{Exclusive: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := openWith(t, url2, pgmeta.Options{Shared: true}); !errors.Is(err, errdefs.ErrBusy) {
		t.Errorf("shared beside an exclusive user: %v, want ErrBusy", err)
	}
}

// TestOwnerReleased: a store closed is free for the next process at
// once, and so, within ownerWait, is one whose holder died (its
// connection cut without a goodbye, as by SIGKILL).
func TestOwnerReleased(t *testing.T) {
	url := pgtest.DB(t)
	for i := range 20 {
		s, err := openWith(t, url, pgmeta.Options{Exclusive: true})
		if err != nil {
			t.Fatalf("open %d right after the previous Close: %v", i, err)
		}
		s.Close()
	}
	ctx := t.Context()
	for i := range 5 {
		held, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		var got bool
		if err := held.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, pgmeta.OwnerLockKey).Scan(&got); err != nil || !got {
			t.Fatalf("take the owner lock: %v, %v", got, err)
		}
		if _, err := openWith(t, url, pgmeta.Options{Exclusive: true}); !errors.Is(err, errdefs.ErrBusy) {
			t.Fatalf("open beside a live holder: %v, want ErrBusy", err)
		}
		held.PgConn().Conn().Close() // the holder dies
		s, err := openWith(t, url, pgmeta.Options{Exclusive: true})
		if err != nil {
			t.Fatalf("open %d right after the holder died: %v", i, err)
		}
		s.Close()
	}
}

// TestListen: one process hears, once each commits, another's head
// advances, workspace deletions and audit entries, and nothing of a
// transaction that rolled back.
func TestListen(t *testing.T) {
	url := pgtest.DB(t)
	a, err := openWith(t, url, pgmeta.Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := openWith(t, url, pgmeta.Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heard := make(chan meta.Notification, 16)
	done := make(chan error, 1)
	go func() {
		done <- a.Listen(ctx, []string{meta.ChannelHeads, meta.ChannelAudit}, func(n meta.Notification) { heard <- n })
	}()
	next := func() meta.Notification {
		t.Helper()
		select {
		case n := <-heard:
			return n
		case <-time.After(10 * time.Second):
			t.Fatal("no notification within 10 s")
		}
		return meta.Notification{}
	}
	if n := next(); n != (meta.Notification{}) {
		t.Fatalf("first notification %+v, want the zero one that says listening began", n)
	}
	w := meta.Workspace{ID: "ws-1", Name: "one"}
	update := func(fn func(meta.Tx) error) error { return b.Update(context.Background(), fn) }
	if err := update(func(tx meta.Tx) error { return tx.CreateWorkspace(&w) }); err != nil {
		t.Fatal(err)
	}
	err = update(func(tx meta.Tx) error {
		if err := tx.AdvanceHead(w.ID, 0); err != nil {
			return err
		}
		return errors.New("roll back")
	})
	if err == nil {
		t.Fatal("the update did not fail")
	}
	if err := update(func(tx meta.Tx) error { return tx.AdvanceHead(w.ID, 0) }); err != nil {
		t.Fatal(err)
	}
	if n := next(); n != (meta.Notification{Channel: meta.ChannelHeads, Payload: "ws-1 1"}) {
		t.Errorf("after an advance: %+v (a rolled-back advance must not be heard)", n)
	}
	var seq int64
	if err := update(func(tx meta.Tx) error {
		e := meta.AuditEntry{WorkspaceID: w.ID, Tool: "write"}
		err := tx.AppendAudit(&e)
		seq = e.Seq
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n := next(); n != (meta.Notification{Channel: meta.ChannelAudit, Payload: fmt.Sprint(seq)}) {
		t.Errorf("after an audit entry %d: %+v", seq, n)
	}
	if err := update(func(tx meta.Tx) error { return tx.DeleteWorkspace(w.ID) }); err != nil {
		t.Fatal(err)
	}
	if n := next(); n != (meta.Notification{Channel: meta.ChannelHeads, Payload: "ws-1 -1"}) {
		t.Errorf("after a deletion: %+v", n)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Listen returned %v after its context ended", err)
	}
}

// TestLock: an exclusive lock excludes across stores (processes), shared
// ones do not exclude each other, and a waiter gets the lock once it is
// released.
func TestLock(t *testing.T) {
	url := pgtest.DB(t)
	a, b := openAt(t, url), openAt(t, url)
	ctx := context.Background()
	// within bounds a wait: short for a lock that must be refused, long
	// (a loaded machine) for one that must be granted.
	within := func(d time.Duration) context.Context {
		c, cancel := context.WithTimeout(ctx, d)
		t.Cleanup(cancel)
		return c
	}
	short := func() context.Context { return within(200 * time.Millisecond) }
	// A lock the test holds when it fails must go before the stores
	// close (a pool waits for the connection holding it), so each is
	// released once, by the test or by its cleanup.
	hold := func(s *pgmeta.Store, ctx context.Context, key string, shared bool) (func(), error) {
		u, err := s.Lock(ctx, key, shared)
		if err != nil {
			return nil, err
		}
		release := sync.OnceFunc(u)
		t.Cleanup(release)
		return release, nil
	}
	unlock, err := hold(a, ctx, "gc", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(short(), "gc", true); err == nil {
		t.Fatal("a shared lock beside an exclusive one")
	}
	if u, err := hold(b, within(10*time.Second), "other", false); err != nil {
		t.Fatalf("another key: %v", err)
	} else {
		u()
	}
	got := make(chan func(), 1)
	go func() {
		u, err := hold(b, ctx, "gc", false)
		if err != nil {
			t.Error(err)
			u = func() {}
		}
		got <- u
	}()
	time.Sleep(100 * time.Millisecond)
	unlock()
	(<-got)()
	u1, err := hold(a, ctx, "roots", true)
	if err != nil {
		t.Fatal(err)
	}
	u2, err := hold(b, within(10*time.Second), "roots", true)
	if err != nil {
		t.Fatalf("two shared locks: %v", err)
	}
	u1()
	u2()
}
