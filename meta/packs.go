package meta

import (
	"time"

	"github.com/forkspace/forkspace/cas"
)

// PackTx is the part of a Tx that keeps the index of packs: immutable
// objects of the blob store holding many small blobs each, written by
// blob/packblob (docs/decisions/022). A pack is recorded before its
// object is written (state PackUploading), indexed once it is (PackLive:
// its entries say where each blob is), and retired when no entry is left
// in it (PackRetired), its object deleted after the grace period.
type PackTx interface {
	// AddPack records pack id of size bytes in state PackUploading,
	// created now (database clock), before its object is written. A pack
	// already recorded is fs.ErrExist.
	AddPack(id cas.Hash, size int64) error
	// IndexPack records where the blobs of pack id are (each entry's
	// Hash, Offset and Size; CreatedAt is set to now) and marks the pack
	// PackLive. A blob already indexed keeps its place: its bytes in this
	// pack are dead. A pack that is not PackUploading (an upload presumed
	// dead and retired meanwhile) is fs.ErrNotExist and nothing changes.
	IndexPack(id cas.Hash, entries []PackEntry) error
	// PackEntry returns where blob h is packed (fs.ErrNotExist if it is
	// not).
	PackEntry(h cas.Hash) (PackEntry, error)
	// PackEntries calls fn for every packed blob; with a non-zero pack,
	// only for those in that pack.
	PackEntries(pack cas.Hash, fn func(PackEntry) error) error
	// DropPackEntries removes the index entries of blobs, wherever they
	// are packed; blobs not packed are ignored.
	DropPackEntries(hashes []cas.Hash) error
	// MovePackEntries points the entries of blobs still packed in pack
	// from at their new places (each entry's Pack and Offset; Size and
	// CreatedAt are kept) and returns how many it moved. Entries no longer
	// in from (dropped, or moved already) are left alone.
	MovePackEntries(from cas.Hash, entries []PackEntry) (int, error)
	// Packs calls fn for every recorded pack, with the entries still in
	// it.
	Packs(fn func(Pack) error) error
	// RetirePack marks pack id PackRetired, now, if no entry is in it, and
	// reports whether it is retired (already, or by this call). A missing
	// pack is fs.ErrNotExist.
	RetirePack(id cas.Hash) (bool, error)
	// DeletePack drops the record of a retired pack whose object is gone;
	// a pack in another state is left alone.
	DeletePack(id cas.Hash) error
}

// Pack states.
const (
	PackUploading = "uploading"
	PackLive      = "live"
	PackRetired   = "retired"
)

// Pack is one recorded pack.
type Pack struct {
	// ID is the BLAKE3 hash of the pack object's bytes.
	ID        cas.Hash
	Size      int64
	State     string
	CreatedAt time.Time
	// RetiredAt is when the pack was retired (zero unless PackRetired).
	RetiredAt time.Time
	// LiveBlobs and LiveBytes count the entries still in the pack.
	LiveBlobs int64
	LiveBytes int64
}

// PackEntry says where a packed blob is: Size bytes at Offset of pack
// Pack. CreatedAt is when it was first indexed (the blob's stored time).
type PackEntry struct {
	Hash      cas.Hash
	Pack      cas.Hash
	Offset    int64
	Size      int64
	CreatedAt time.Time
}
