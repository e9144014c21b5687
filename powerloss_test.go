package forkspace_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/blob/fileblob"
	"github.com/forkspace/forkspace/cas"
)

// powerBlobs is a local blob store that remembers which blobs a power
// loss could take: those put with PutDeferred and not yet covered by a
// Sync. lose deletes them, as a power cut drops unsynced writes.
type powerBlobs struct {
	*fileblob.Store
	mu       sync.Mutex
	unsynced map[cas.Hash]bool
}

var _ blob.Deferred = (*powerBlobs)(nil)

func (p *powerBlobs) PutDeferred(ctx context.Context, id cas.Hash, data []byte) error {
	if err := p.Store.PutDeferred(ctx, id, data); err != nil {
		return err
	}
	p.mu.Lock()
	p.unsynced[id] = true
	p.mu.Unlock()
	return nil
}

func (p *powerBlobs) Sync(ctx context.Context) error {
	p.mu.Lock()
	taken := p.unsynced
	p.unsynced = map[cas.Hash]bool{}
	p.mu.Unlock()
	if err := p.Store.Sync(ctx); err != nil {
		p.mu.Lock()
		for id := range taken {
			p.unsynced[id] = true
		}
		p.mu.Unlock()
		return err
	}
	return nil
}

// lose deletes the blobs a power cut now would drop and returns how many.
func (p *powerBlobs) lose(t *testing.T) int {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for id := range p.unsynced {
		if err := os.Remove(p.Path(id)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	n := len(p.unsynced)
	p.unsynced = map[cas.Hash]bool{}
	return n
}

func randomBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 7))
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// metaImage copies the committed state of the store's metadata database
// into a fresh file: what the disk holds after a power cut that keeps
// exactly the transactions committed so far (VACUUM INTO reads through
// the WAL).
func metaImage(t *testing.T, dir, into string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "meta.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("VACUUM INTO ?", into); err != nil {
		t.Fatal(err)
	}
}

// TestPowerLossDurabilitySplit checks the two promises of
// docs/decisions/021 against a simulated power cut (unsynced blob writes
// dropped, metadata rolled back to a chosen commit): a file written and
// fsynced is whole after any cut; a file only closed may be lost with the
// metadata that named it but never comes back damaged, because a commit
// makes the chunks it names durable first; and the store checks clean.
func TestPowerLossDurabilitySplit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fb, err := fileblob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	pb := &powerBlobs{Store: fb, unsynced: map[cas.Hash]bool{}}
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir, Blobs: pb})
	if err != nil {
		t.Fatal(err)
	}
	w := mustCreate(t, st, "p")
	synced, closed := randomBytes(3<<20, 1), randomBytes(2<<20, 2)
	write := func(name string, data []byte, fsync bool) {
		t.Helper()
		f, err := w.OpenFile(ctx, name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off < len(data); off += 100 << 10 {
			if _, err := f.Write(data[off:min(off+100<<10, len(data))]); err != nil {
				t.Fatal(err)
			}
		}
		if fsync {
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write("synced.bin", synced, true)
	afterSync := filepath.Join(t.TempDir(), "meta.db")
	metaImage(t, dir, afterSync)
	write("closed.bin", closed, false)
	afterClose := filepath.Join(t.TempDir(), "meta.db")
	metaImage(t, dir, afterClose)

	// A chunk put for a commit that never happened (a refused or
	// abandoned write) is what a cut may drop: nothing names it.
	stray := randomBytes(300<<10, 3)
	if err := pb.PutDeferred(ctx, cas.Sum(stray), stray); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if n := pb.lose(t); n != 1 {
		t.Errorf("a power cut now drops %d blobs; want only the stray one: every committed chunk must be durable", n)
	}

	for _, c := range []struct {
		name       string
		image      string
		wantClosed bool
	}{
		{"cut after fsync, before close committed", afterSync, false},
		{"cut after close committed, WAL not yet synced", afterClose, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cut := t.TempDir()
			data, err := os.ReadFile(c.image)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cut, "meta.db"), data, 0o600); err != nil {
				t.Fatal(err)
			}
			blobs, err := fileblob.Open(filepath.Join(dir, "blobs"))
			if err != nil {
				t.Fatal(err)
			}
			st, err := forkspace.Open(ctx, forkspace.Options{Dir: cut, Blobs: blobs})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			w, err := st.Workspace(ctx, "p")
			if err != nil {
				t.Fatal(err)
			}
			got, err := w.ReadFile(ctx, "synced.bin")
			if err != nil || !bytes.Equal(got, synced) {
				t.Fatalf("fsynced file after the cut: %d bytes, %v", len(got), err)
			}
			got, err = w.ReadFile(ctx, "closed.bin")
			switch {
			case c.wantClosed && (err != nil || !bytes.Equal(got, closed)):
				t.Fatalf("closed file whose commit survived: %d bytes, %v", len(got), err)
			case !c.wantClosed && !errors.Is(err, fs.ErrNotExist):
				t.Fatalf("closed file whose commit was cut: %d bytes, %v; want it absent", len(got), err)
			}
			r, err := st.Check(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Clean() {
				t.Fatalf("store after the cut is damaged: %+v", r.Problems)
			}
		})
	}
}
