package sqlitemeta_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/internal/disktest"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
	_ "modernc.org/sqlite" // the "sqlite" driver, to tamper with files directly
)

// filledDatabase creates a closed database of about 2 MiB and returns its
// path.
func filledDatabase(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "full.db")
	s, err := sqlitemeta.Open(context.Background(), path, sqlitemeta.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(context.Background(), func(tx meta.Tx) error {
		objs := make([]meta.Object, 2000)
		for i := range objs {
			data := bytes.Repeat([]byte{byte(i)}, 1000)
			copy(data, fmt.Sprint(i))
			objs[i] = meta.Object{Hash: cas.Sum(data), Data: data}
		}
		return tx.PutNodes(objs)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenCorrupt(t *testing.T) {
	full := filledDatabase(t)
	data, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(full + "-wal"); err == nil {
		t.Fatal("Close left a WAL file behind")
	}
	page := int(data[16])<<8 | int(data[17]) // the header's page size
	garbage := make([]byte, 64<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	damaged := bytes.Clone(data)
	copy(damaged[len(data)/2/page*page:], garbage[:page]) // one page of a b-tree overwritten
	cases := []struct {
		name string
		data []byte
	}{
		{"garbage", garbage},
		{"text", []byte("this is not a database\n")},
		{"header only", data[:100]},
		{"first page", data[:page]},
		{"half", data[:len(data)/2/page*page]},
		{"all but the last page", data[:len(data)-page]},
		{"a cut into the last page", data[:len(data)-1000]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.db")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := sqlitemeta.Open(context.Background(), path, sqlitemeta.Options{Logger: quiet})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, errdefs.ErrCorrupt) {
				t.Fatalf("Open: %v, want errdefs.ErrCorrupt", err)
			}
		})
	}
	// A page damaged inside a whole file passes Open, which reads only the
	// header and schema, and is found by CheckIntegrity (fsck).
	t.Run("a damaged page", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "bad.db")
		if err := os.WriteFile(path, damaged, 0o600); err != nil {
			t.Fatal(err)
		}
		s := openAt(t, path)
		if err := s.CheckIntegrity(context.Background()); !errors.Is(err, errdefs.ErrCorrupt) {
			t.Fatalf("CheckIntegrity of a damaged page: %v, want errdefs.ErrCorrupt", err)
		}
	})
	// The intact file still opens, reads and checks clean.
	s := openAt(t, full)
	data0 := bytes.Repeat([]byte{0}, 1000)
	copy(data0, "0")
	if got, err := s.GetNode(context.Background(), cas.Sum(data0)); err != nil || !bytes.Equal(got, data0) {
		t.Fatalf("GetNode of the intact file = %d bytes, %v", len(got), err)
	}
	if err := s.CheckIntegrity(context.Background()); err != nil {
		t.Fatalf("CheckIntegrity of the intact file: %v", err)
	}
}

func TestOpenNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	s := openAt(t, path)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var version int
	if err := raw.QueryRow(`SELECT MAX(version) FROM schema_migrations`).Scan(&version); err != nil || version < 1 {
		t.Fatalf("schema_migrations after Open: version %d, %v", version, err)
	}
	if _, err := raw.Exec(`INSERT INTO schema_migrations (version, applied_at) VALUES (999, 0)`); err != nil {
		t.Fatal(err)
	}
	_, err = sqlitemeta.Open(context.Background(), path, sqlitemeta.Options{Logger: quiet})
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Open of a newer schema: %v, want errors.ErrUnsupported", err)
	}
}

func TestOpenMissingDirectory(t *testing.T) {
	_, err := sqlitemeta.Open(context.Background(), filepath.Join(t.TempDir(), "no", "such", "meta.db"), sqlitemeta.Options{Logger: quiet})
	if err == nil || errors.Is(err, errdefs.ErrCorrupt) {
		t.Fatalf("Open in a missing directory: %v, want a plain error", err)
	}
}

// TestTwoStores opens the same file twice in one process, as two processes
// would: writes of one are visible to the other, and migrations run once.
func TestTwoStores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	a, b := openAt(t, path), openAt(t, path)
	ctx := context.Background()
	if err := a.Update(ctx, func(tx meta.Tx) error { return tx.SetSetting("k", "from a") }); err != nil {
		t.Fatal(err)
	}
	var first int64
	if err := b.Update(ctx, func(tx meta.Tx) (err error) {
		first, err = tx.Allocate("c", 1)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	err := b.View(ctx, func(tx meta.Tx) error {
		v, err := tx.Setting("k")
		if err == nil && v != "from a" {
			err = fmt.Errorf("got %q", v)
		}
		return err
	})
	if err != nil || first != 1 {
		t.Fatalf("second store: setting %v, counter %d", err, first)
	}
	_, err = a.GetInline(ctx, cas.Sum(nil))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("GetInline of a missing body: %v", err)
	}
}

// TestOpenOddPath opens a database whose path holds characters that mean
// something in a URI.
func TestOpenOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir?with#odd%chars&=;")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "meta ü.db")
	s := openAt(t, path)
	if err := s.Update(context.Background(), func(tx meta.Tx) error { return tx.SetSetting("k", "v") }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at the given path: %v", err)
	}
}

// TestBusy holds the write lock in one store while another, with a short
// BusyTimeout, tries to write: it gives up with errdefs.ErrBusy, and
// succeeds once the lock is free.
func TestBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	a := openAt(t, path)
	b, err := sqlitemeta.Open(context.Background(), path, sqlitemeta.Options{BusyTimeout: 50 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	holding, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- a.Update(context.Background(), func(tx meta.Tx) error {
			if err := tx.SetSetting("k", "a"); err != nil {
				return err
			}
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	err = b.Update(context.Background(), func(tx meta.Tx) error { return tx.SetSetting("k", "b") })
	close(release)
	if !errors.Is(err, errdefs.ErrBusy) {
		t.Fatalf("Update while another store writes: %v, want errdefs.ErrBusy", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := b.Update(context.Background(), func(tx meta.Tx) error { return tx.SetSetting("k", "b") }); err != nil {
		t.Fatalf("Update after the lock was released: %v", err)
	}
}

// TestDiskFull fills the file system under the database (a 2 MiB tmpfs):
// the failing write reports syscall.ENOSPC — the errno every layer above
// maps to "out of disk space" — and the store keeps what was committed.
func TestDiskFull(t *testing.T) {
	path := filepath.Join(disktest.Small(t, 2<<20), "meta.db")
	s := openAt(t, path)
	ctx := context.Background()
	big := strings.Repeat("x", 256<<10)
	var err error
	n := 0
	for ; n < 64 && err == nil; n++ {
		err = s.Update(ctx, func(tx meta.Tx) error { return tx.SetSetting(fmt.Sprint("k", n), big) })
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write %d to a full disk: %v, want syscall.ENOSPC", n, err)
	}
	err = s.View(ctx, func(tx meta.Tx) error {
		v, err := tx.Setting("k0")
		if err == nil && v != big {
			err = fmt.Errorf("k0 holds %d bytes", len(v))
		}
		return err
	})
	if err != nil {
		t.Fatalf("a committed setting after the disk filled: %v", err)
	}
}
