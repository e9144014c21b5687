package forkspace

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/blob/diskcache"
	"github.com/forkspace/forkspace/blob/packblob"
	"github.com/forkspace/forkspace/meta"
)

// settingBlobStore records where a store's blobs live: "local" (blobs/ in
// the store directory) or a blob.Locator's location ("s3://bucket/prefix").
const settingBlobStore = "blob_store"

// localBlobs is settingBlobStore's value for the embedded blob directory.
const localBlobs = "local"

// checkBlobStore refuses to open a store with a blob store other than the
// one it records (fs.ErrInvalid): reads would find every chunk missing,
// and a collection would delete the other store's blobs as garbage. The
// first open of a store that records none records the one it is opened
// with. A blob store that is not a Locator (memblob, a fileblob passed in
// code) is not checked. A database holding an unfinished store copy is
// refused first (copymark.go).
func checkBlobStore(tx meta.Tx, opts Options) error {
	if err := checkNotCopying(tx); err != nil {
		return err
	}
	cur := localBlobs
	if opts.Blobs != nil {
		l, ok := opts.Blobs.(blob.Locator)
		if !ok {
			return nil
		}
		cur = l.Location()
	}
	rec, err := tx.Setting(settingBlobStore)
	if errors.Is(err, fs.ErrNotExist) {
		return tx.SetSetting(settingBlobStore, cur)
	}
	if err != nil {
		return err
	}
	if rec != cur {
		how := "--blob " + rec
		if rec == localBlobs {
			how = "no --blob"
		}
		return fmt.Errorf("open store: %w: its blobs are in %s, not %s (open it with %s)", fs.ErrInvalid, rec, cur, how)
	}
	return nil
}

// PackOptions configure how a store packs small blobs
// (docs/decisions/022). Packing applies to blob stores that ask for it
// (blob.Packable: s3blob); local directories keep one file per blob.
type PackOptions struct {
	// Disable keeps one object per blob on a store that would pack.
	Disable bool
	// MaxPacked is the largest blob packed (packblob.DefaultMaxPacked if
	// zero); PackSize the size at which a pack is stored without waiting
	// for a commit (packblob.DefaultPackSize if zero).
	MaxPacked int
	PackSize  int
	// CacheDir is the local disk cache of blobs read from the store
	// (blob/diskcache; default: blobcache/ in the store directory, when
	// the store has one). CacheBytes bounds it (DefaultCacheBytes if
	// zero; negative: no cache).
	CacheDir   string
	CacheBytes int64
}

// DefaultCacheBytes bounds the disk cache of a remote blob store.
const DefaultCacheBytes = 1 << 30

// packBlobs wraps b in a packblob.Store indexed in m, read through a disk
// cache in o.CacheDir (else dir/blobcache), when b asks for packing and o
// does not disable it; otherwise it returns b and nil.
func packBlobs(m meta.Store, b blob.Store, dir string, o PackOptions) (blob.Store, *packblob.Store, error) {
	p, ok := b.(blob.Packable)
	if !ok || o.Disable {
		return b, nil, nil
	}
	cacheDir := o.CacheDir
	if cacheDir == "" && dir != "" {
		cacheDir = filepath.Join(dir, "blobcache")
	}
	var c *diskcache.Cache
	if cacheDir != "" && o.CacheBytes >= 0 {
		var err error
		if c, err = diskcache.Open(cacheDir, cmp.Or(o.CacheBytes, DefaultCacheBytes)); err != nil {
			return b, nil, err
		}
	}
	po := packblob.Options{Packs: p.PackStore(), Meta: m, MaxPacked: o.MaxPacked, PackSize: o.PackSize}
	if c != nil {
		po.Prefetched = c.Add
	}
	ps, err := packblob.New(b, po)
	switch {
	case err != nil:
		return b, nil, err
	case c == nil:
		return ps, ps, nil
	}
	return diskcache.Wrap(ps, c), ps, nil
}
