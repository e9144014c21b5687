package packblob

import (
	"crypto/rand"
	"encoding/binary"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

// Pack object format (all integers big-endian):
//
//	header   "FSPACK01" and 16 random bytes (no two packs share an address)
//	blobs    the packed blobs, back to back
//	index    per blob: its 32-byte address, 8-byte offset, 8-byte size
//	footer   8-byte count of index entries, "FSPACKIX"
//
// The metadata index is what reads use; the object's own index lets a
// pack be understood without it (salvage).
const (
	headerMagic = "FSPACK01"
	footerMagic = "FSPACKIX"
	headerSize  = len(headerMagic) + 16
	indexEntry  = cas.Size + 16
)

// pack is a pack being filled, or sealed and being stored. Its fields are
// guarded by Store.mu until it is sealed; done is closed, and err set,
// once it is stored (indexed) or failed.
type pack struct {
	buf     []byte
	entries []meta.PackEntry
	at      map[cas.Hash]int // blob → index in entries
	done    chan struct{}
	err     error
}

// newPack returns an empty pack with room for about size bytes of blobs
// (a pack grown by append would copy its bytes again each time it
// doubled).
func newPack(size int) *pack {
	buf := make([]byte, headerSize, headerSize+size)
	copy(buf, headerMagic)
	_, _ = rand.Read(buf[len(headerMagic):headerSize]) // crypto/rand never fails
	return &pack{buf: buf, at: map[cas.Hash]int{}, done: make(chan struct{})}
}

// add appends blob h.
func (p *pack) add(h cas.Hash, data []byte) {
	p.at[h] = len(p.entries)
	p.entries = append(p.entries, meta.PackEntry{Hash: h, Offset: int64(len(p.buf)), Size: int64(len(data))})
	p.buf = append(p.buf, data...)
}

// bytes returns a copy of blob h, if the pack holds it.
func (p *pack) bytes(h cas.Hash) ([]byte, bool) {
	i, ok := p.at[h]
	if !ok {
		return nil, false
	}
	e := p.entries[i]
	return append([]byte{}, p.buf[e.Offset:e.Offset+e.Size]...), true
}

// empty reports whether the pack holds no blob.
func (p *pack) empty() bool { return len(p.entries) == 0 }

// finish appends the index and footer: the pack's bytes are final.
func (p *pack) finish() {
	var b [8]byte
	for _, e := range p.entries {
		p.buf = append(p.buf, e.Hash[:]...)
		p.buf = binary.BigEndian.AppendUint64(p.buf, uint64(e.Offset))
		p.buf = binary.BigEndian.AppendUint64(p.buf, uint64(e.Size))
	}
	binary.BigEndian.PutUint64(b[:], uint64(len(p.entries)))
	p.buf = append(p.buf, b[:]...)
	p.buf = append(p.buf, footerMagic...)
}
