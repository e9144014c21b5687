package forkspace_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/blob/s3blob"
	"github.com/forkspace/forkspace/feed"
	"github.com/forkspace/forkspace/internal/pgtest"
	"github.com/forkspace/forkspace/internal/s3client"
	"github.com/forkspace/forkspace/internal/s3test"
	"github.com/forkspace/forkspace/meta/pgmeta"
)

// sharedFixture is one PostgreSQL database and one bucket prefix, which
// every store it opens shares, as the nodes of a deployment do.
type sharedFixture struct {
	db     string
	s3     *s3test.Versity
	prefix string
}

func newSharedFixture(t testing.TB) *sharedFixture {
	return &sharedFixture{db: pgtest.DB(t), s3: s3test.StartVersity(t, "shared"), prefix: "store"}
}

// open opens one more process's view of the store (Options.Shared).
func (fx *sharedFixture) open(t testing.TB) *forkspace.Store {
	t.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	m, err := pgmeta.Open(ctx, fx.db, pgmeta.Options{Shared: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	b, err := versityBlobs(fx.s3.Direct, "shared", fx.prefix)
	if err != nil {
		t.Fatal(err)
	}
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: t.TempDir(), Meta: m, Blobs: b, Shared: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// versityBlobs opens the blob store under prefix in bucket of the S3
// server at endpoint (versitygw, with s3test's credentials).
func versityBlobs(endpoint, bucket, prefix string) (*s3blob.Store, error) {
	return s3blob.Open(s3blob.Options{
		Bucket: bucket, Prefix: prefix, Endpoint: endpoint, PathStyle: true, Region: s3test.Region,
		Credentials: &s3client.Credentials{AccessKeyID: s3test.AccessKey, SecretAccessKey: s3test.SecretKey},
	})
}

// eventually waits up to 20 s for cond, which another process's
// notification makes true.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20 s", what)
		}
	}
}

// TestSharedStores runs two stores on one PostgreSQL database and one
// bucket, as two server nodes: each serves what the other wrote, writes
// to one workspace from both land without losing any, forks and
// checkpoints made on one are used on the other, the change feed and
// deletions reach the other by notification, and collections on both
// keep what either references.
func TestSharedStores(t *testing.T) {
	ctx := context.Background()
	fx := newSharedFixture(t)
	a, b := fx.open(t), fx.open(t)

	wa, err := a.Create(ctx, "w", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 300<<10) // past the inline limit: bytes in the bucket
	for i := range big {
		big[i] = byte(i * 7)
	}
	must(t, wa.WriteFile(ctx, "a.txt", []byte("from a"), 0o644))
	must(t, wa.WriteFile(ctx, "big.bin", big, 0o644))
	wb, err := b.Workspace(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	wantFile(t, wb, "a.txt", "from a")
	wantFile(t, wb, "big.bin", string(big))

	// b writes into a directory a just made, with no notification yet:
	// its mirror is out of date, and the write still lands.
	must(t, wa.Mkdir(ctx, "d", 0o755))
	must(t, wb.WriteFile(ctx, "d/from-b", []byte("b"), 0o644))
	again, err := a.Workspace(ctx, "w") // catches up before it returns
	if err != nil || again != wa {
		t.Fatalf("Workspace on a: %v (same handle %v)", err, again == wa)
	}
	wantFile(t, wa, "d/from-b", "b")

	// Notification alone brings b's change to a's open workspace.
	must(t, wb.WriteFile(ctx, "notified", []byte("n"), 0o644))
	eventually(t, "a serving b's write", func() bool { _, err := wa.Stat(ctx, "notified"); return err == nil })
	// b recorded its change; a's reloads record nothing.
	time.Sleep(50 * time.Millisecond) // past the recorder's gathering of changes
	es, err := a.AuditLog().Entries(ctx, audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if strings.Contains(e.Tool, "reload") {
			t.Errorf("a recorded another node's change: %+v", e)
		}
	}

	// Writers on both nodes at once: every file lands.
	const per = 40
	var wg sync.WaitGroup
	for i, w := range []*forkspace.Workspace{wa, wb, wa, wb} {
		wg.Go(func() {
			for j := range per {
				if err := w.WriteFile(ctx, fmt.Sprintf("d/w%d-%02d", i, j), []byte{byte(j)}, 0o644); err != nil {
					t.Errorf("writer %d: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, st := range []*forkspace.Store{a, b} {
		w, err := st.Workspace(ctx, "w")
		if err != nil {
			t.Fatal(err)
		}
		es, err := w.ReadDir(ctx, "d")
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 1+4*per {
			t.Errorf("d holds %d entries, want %d", len(es), 1+4*per)
		}
	}

	// A checkpoint taken on a restores on b; a fork made on b is open on a.
	cp, err := wa.Checkpoint(ctx, "before")
	if err != nil {
		t.Fatal(err)
	}
	must(t, wa.WriteFile(ctx, "a.txt", []byte("changed"), 0o644))
	if _, err := b.Workspace(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	must(t, wb.Restore(ctx, cp.ID))
	if _, err := a.Workspace(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	wantFile(t, wa, "a.txt", "from a")
	fork, err := wb.Fork(ctx, "f", forkspace.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	must(t, fork.WriteFile(ctx, "only-in-fork", []byte("f"), 0o644))
	fa, err := a.Workspace(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	wantFile(t, fa, "only-in-fork", "f")
	wantFile(t, fa, "big.bin", string(big))

	// The change feed of a carries b's entries.
	cur, err := a.Feed().Subscribe(ctx, a.Feed().Last(), feed.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	aud, err := b.Audited(ctx, "w", forkspace.AuditOptions{Actor: audit.Actor{Name: "node-b"}})
	if err != nil {
		t.Fatal(err)
	}
	must(t, aud.WriteFile(ctx, "audited", []byte("x"), 0o644))
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	found := false
	for !found {
		es, err := cur.Next(wait)
		if err != nil {
			t.Fatalf("a's feed did not carry b's audited write: %v", err)
		}
		for _, e := range es {
			found = found || e.Actor == "node-b"
		}
	}

	// Collections on both nodes, one after the other, keep everything
	// either serves.
	for _, st := range []*forkspace.Store{a, b} {
		if _, err := st.GC(ctx, forkspace.GCOptions{Grace: -1}); err != nil {
			t.Fatal(err)
		}
	}
	wantFile(t, fa, "big.bin", string(big))
	wantFile(t, wb, "big.bin", string(big))

	// A deletion on b reaches a: the open workspace is forgotten.
	must(t, b.Delete(ctx, "f"))
	eventually(t, "a forgetting the deleted fork", func() bool {
		_, err := fa.Stat(ctx, ".")
		return errors.Is(err, fs.ErrClosed)
	})
	if _, err := a.Workspace(ctx, "f"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a opening the deleted fork: %v, want fs.ErrNotExist", err)
	}
}

// TestSharedNeedsSharedDrivers: a store cannot be shared over drivers
// that other processes cannot reach or be told about.
func TestSharedNeedsSharedDrivers(t *testing.T) {
	ctx := context.Background()
	_, err := forkspace.Open(ctx, forkspace.Options{Dir: t.TempDir(), Shared: true})
	if !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("shared SQLite store: %v, want fs.ErrInvalid", err)
	}
	m, err := pgmeta.Open(ctx, pgtest.DB(t), pgmeta.Options{Shared: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = forkspace.Open(ctx, forkspace.Options{Dir: t.TempDir(), Meta: m, Shared: true})
	if !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("shared store with a local blob directory: %v, want fs.ErrInvalid", err)
	}
}

func wantFile(t *testing.T, w *forkspace.Workspace, name, want string) {
	t.Helper()
	got, err := w.ReadFile(context.Background(), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if string(got) != want {
		t.Errorf("%s holds %d bytes %.20q, want %d bytes %.20q", name, len(got), got, len(want), want)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSharedCollections runs collections on two nodes at once while both
// write, fork and delete: collections take turns across the nodes, every
// acknowledged file reads back on both afterwards, and a check finds the
// store whole.
func TestSharedCollections(t *testing.T) {
	ctx := context.Background()
	fx := newSharedFixture(t)
	a, b := fx.open(t), fx.open(t)
	wa, err := a.Create(ctx, "w", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wb, err := b.Workspace(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	content := func(i int) []byte {
		p := make([]byte, 40<<10) // past the inline limit: a blob each
		copy(p, fmt.Sprintf("file %d", i))
		return p
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		written []int
	)
	stop := make(chan struct{})
	for n, w := range []*forkspace.Workspace{wa, wb} {
		wg.Go(func() {
			for i := n; ; i += 2 {
				select {
				case <-stop:
					return
				default:
				}
				if err := w.WriteFile(ctx, fmt.Sprintf("f%03d", i), content(i), 0o644); err != nil {
					t.Errorf("write %d: %v", i, err)
					return
				}
				if i%10 == n { // a fork and its deletion: garbage for the collections
					name := fmt.Sprint("fork", i)
					f, err := w.Fork(ctx, name, forkspace.ForkOptions{})
					if err == nil {
						err = f.WriteFile(ctx, "own", content(-i), 0o644)
					}
					if err == nil {
						err = []*forkspace.Store{a, b}[n].Delete(ctx, name)
					}
					if err != nil {
						t.Errorf("fork %s: %v", name, err)
						return
					}
				}
				mu.Lock()
				written = append(written, i)
				mu.Unlock()
			}
		})
	}
	var reclaimed atomic.Int64
	for range 3 {
		var gcs sync.WaitGroup
		for _, st := range []*forkspace.Store{a, b} {
			gcs.Go(func() {
				r, err := st.GC(ctx, forkspace.GCOptions{Grace: -1})
				if err != nil {
					t.Errorf("gc: %v", err)
				}
				reclaimed.Add(r.Reclaimed.Blobs)
			})
		}
		gcs.Wait()
	}
	close(stop)
	wg.Wait()
	t.Logf("%d files written, %d blobs reclaimed during the collections", len(written), reclaimed.Load())
	if len(written) == 0 || reclaimed.Load() == 0 {
		t.Fatal("no write finished or no blob was reclaimed during the collections: the test raced nothing")
	}
	for _, st := range []*forkspace.Store{a, b} {
		w, err := st.Workspace(ctx, "w")
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range written {
			got, err := w.ReadFile(ctx, fmt.Sprintf("f%03d", i))
			if err != nil || string(got) != string(content(i)) {
				t.Fatalf("f%03d after the collections: %d bytes, %v", i, len(got), err)
			}
		}
	}
	r, err := a.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Clean() {
		t.Errorf("check after collections on two nodes: %+v", r.Problems)
	}
}
