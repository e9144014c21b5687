package packblob_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/forkspace/forkspace/blob/blobtest"
	"github.com/forkspace/forkspace/blob/memblob"
	"github.com/forkspace/forkspace/blob/packblob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/memmeta"
)

// packed is a pack store over memory with a pack store that can fail.
type packed struct {
	s     *packblob.Store
	packs *failing
	meta  meta.Store
	ids   []cas.Hash
	data  map[cas.Hash][]byte
}

func newPacked(t *testing.T, n, size int) *packed {
	t.Helper()
	p := &packed{packs: &failing{Store: memblob.New()}, meta: memmeta.New(), data: map[cas.Hash][]byte{}}
	var err error
	p.s, err = packblob.New(memblob.New(), packblob.Options{Packs: p.packs, Meta: p.meta, PackSize: 10 * size})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.s.Close() })
	for i := range n {
		id, data := blobtest.Blob(uint64(1000+i), size)
		if err := p.s.PutDeferred(t.Context(), id, data); err != nil {
			t.Fatal(err)
		}
		p.ids = append(p.ids, id)
		p.data[id] = data
	}
	if err := p.s.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	return p
}

// check reads every blob of want whole and checks the others are gone.
func (p *packed) check(t *testing.T, want map[cas.Hash]bool) {
	t.Helper()
	for _, id := range p.ids {
		got, err := p.s.Get(context.Background(), id, 0, -1)
		switch {
		case want[id] && (err != nil || !bytes.Equal(got, p.data[id])):
			t.Fatalf("blob %s: %d bytes, %v", id.Short(), len(got), err)
		case !want[id] && !errors.Is(err, fs.ErrNotExist):
			t.Fatalf("deleted blob %s: %v, want fs.ErrNotExist", id.Short(), err)
		}
	}
}

func (p *packed) packStates(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	err := p.meta.View(t.Context(), func(tx meta.Tx) error {
		return tx.Packs(func(pk meta.Pack) error { out[pk.State]++; return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func compact(t *testing.T, s *packblob.Store, o packblob.CompactOptions) (packblob.CompactReport, error) {
	t.Helper()
	plan, err := s.PlanCompaction(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	return plan.Execute(t.Context())
}

// TestCompact: packs mostly deleted are rewritten into one, their objects
// kept for the grace period and deleted after; packs mostly live are left
// alone.
func TestCompact(t *testing.T) {
	p := newPacked(t, 40, 10000) // 4 packs of 10 blobs
	want := map[cas.Hash]bool{}
	var drop []cas.Hash
	for i, id := range p.ids {
		// The first two packs keep 2 of 10 blobs, the last two 8.
		if keep := (i < 20 && i%10 < 2) || (i >= 20 && i%10 < 8); keep {
			want[id] = true
		} else {
			drop = append(drop, id)
		}
	}
	for _, id := range drop {
		if err := p.s.Delete(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
	plan, err := p.s.PlanCompaction(t.Context(), packblob.CompactOptions{Grace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if plan.RewritePacks != 2 || plan.CopyBytes != 4*10000 || plan.ExpiredPacks != 0 {
		t.Fatalf("plan: %+v", plan)
	}
	r, err := plan.Execute(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if r.WrittenPacks != 1 || r.CopiedBlobs != 4 || r.RetiredPacks != 2 || r.DeletedPacks != 0 {
		t.Fatalf("report: %+v", r)
	}
	p.check(t, want)
	if n := countPacks(t, p.packs); n != 5 {
		t.Fatalf("%d pack objects within the grace period, want 4 old and 1 new", n)
	}
	// Past the grace period the retired packs go.
	if r, err = compact(t, p.s, packblob.CompactOptions{}); err != nil || r.DeletedPacks != 2 || r.WrittenPacks != 0 {
		t.Fatalf("second compaction: %+v, %v", r, err)
	}
	if n := countPacks(t, p.packs); n != 3 {
		t.Fatalf("%d pack objects after the grace period, want 3", n)
	}
	if st := p.packStates(t); st[meta.PackLive] != 3 || len(st) != 1 {
		t.Fatalf("pack states %v", st)
	}
	p.check(t, want)
	// Deleting everything retires every pack; nothing is left.
	for id := range want {
		if err := p.s.Delete(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := compact(t, p.s, packblob.CompactOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := countPacks(t, p.packs); n != 0 {
		t.Fatalf("%d pack objects left with no blob", n)
	}
	if st := p.packStates(t); len(st) != 0 {
		t.Fatalf("pack records left: %v", st)
	}
	p.check(t, nil)
}

// TestCompactCrash: a compaction that fails at any step (pack upload,
// pack deletion) leaves every live blob readable, and the next one
// finishes the work, retiring the abandoned upload.
func TestCompactCrash(t *testing.T) {
	p := newPacked(t, 20, 10000)
	want := map[cas.Hash]bool{}
	for i, id := range p.ids {
		if i%10 == 0 {
			want[id] = true
			continue
		}
		if err := p.s.Delete(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
	p.packs.fail.Store(true)
	if _, err := compact(t, p.s, packblob.CompactOptions{}); !errors.Is(err, errInjected) {
		t.Fatalf("compaction with uploads failing: %v", err)
	}
	p.check(t, want)
	if st := p.packStates(t); st[meta.PackUploading] != 1 || st[meta.PackLive] != 2 {
		t.Fatalf("states after the failed upload: %v", st)
	}
	p.packs.fail.Store(false)
	// Within the upload expiry the abandoned pack stays; past it, it is
	// retired and, with no grace, deleted.
	r, err := compact(t, p.s, packblob.CompactOptions{UploadExpiry: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.WrittenPacks != 1 || r.RetiredPacks != 3 || r.DeletedPacks != 3 {
		t.Fatalf("recovering compaction: %+v", r)
	}
	p.check(t, want)
	if n := countPacks(t, p.packs); n != 1 {
		t.Fatalf("%d pack objects, want the one rewritten", n)
	}
}

// TestCompactDamaged: a blob whose bytes in its pack are damaged is not
// copied (its pack stays, fsck reports it); the others move.
func TestCompactDamaged(t *testing.T) {
	f := newFile(t, packblob.Options{PackSize: 100000})
	var ids []cas.Hash
	for i := range 10 {
		id, data := blobtest.Blob(uint64(i), 10000)
		ids = append(ids, id)
		if err := f.s.PutDeferred(t.Context(), id, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.s.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[2:9] {
		if err := f.s.Delete(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
	e := packOf(t, f.meta, ids[0])
	damage(t, f.packs.Path(e.Pack), func(b []byte) []byte { b[e.Offset+7] ^= 1; return b })
	r, err := compact(t, f.s, packblob.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Damaged) != 1 || r.Damaged[0] != ids[0] || r.CopiedBlobs != 2 || r.RetiredPacks != 0 {
		t.Fatalf("report: %+v", r)
	}
	if packOf(t, f.meta, ids[1]).Pack == e.Pack {
		t.Fatal("an intact blob was not moved")
	}
}

// TestCompactConcurrent runs compactions without grace in a loop beside
// writers that put (again) and delete blobs and readers: every blob whose
// last put returned and that was not deleted since reads back whole.
func TestCompactConcurrent(t *testing.T) {
	s, err := packblob.New(memblob.New(), packblob.Options{Packs: memblob.New(), Meta: memmeta.New(), PackSize: 50000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const blobs = 40
	ids := make([]cas.Hash, blobs)
	datas := make([][]byte, blobs)
	for i := range ids {
		ids[i], datas[i] = blobtest.Blob(uint64(i), 3000)
	}
	ctx := t.Context()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	// Each writer owns blobs w, w+4, …: it knows their state.
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			present := map[int]bool{}
			for n := 0; n < 300; n++ {
				i := w + 4*r.IntN(blobs/4)
				switch r.IntN(3) {
				case 0:
					if err := s.Delete(ctx, ids[i]); err != nil {
						errs <- err
						return
					}
					present[i] = false
				default:
					if err := s.Put(ctx, ids[i], datas[i]); err != nil {
						errs <- err
						return
					}
					present[i] = true
				}
				j := w + 4*r.IntN(blobs/4)
				got, err := s.Get(ctx, ids[j], 0, -1)
				switch {
				case present[j] && (err != nil || !bytes.Equal(got, datas[j])):
					errs <- fmt.Errorf("blob %d present: %d bytes, %v", j, len(got), err)
					return
				case !present[j] && err == nil:
					errs <- fmt.Errorf("blob %d deleted but read", j)
					return
				}
			}
		})
	}
	compactions := 0
	var compactor sync.WaitGroup
	compactor.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			plan, err := s.PlanCompaction(ctx, packblob.CompactOptions{MinLive: 0.9})
			if err == nil {
				_, err = plan.Execute(ctx)
			}
			if err != nil {
				errs <- fmt.Errorf("compaction: %w", err)
				return
			}
			compactions++
		}
	})
	wg.Wait()
	close(stop)
	compactor.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if compactions == 0 {
		t.Fatal("no compaction ran")
	}
}
