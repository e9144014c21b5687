package forkspace

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/forkspace/forkspace/blob"
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
