package content

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
)

// The binary form of a Manifest, all integers minimal unsigned varints:
//
//	version (1)
//	flags   (bit 0: inline)
//	size
//	count   (number of extents)
//	count × { size<<1 | isChunk, then the 32-byte hash if isChunk }
//
// Extents are non-empty and sum to size; holes are never adjacent; an
// inline manifest has exactly one chunk extent; an empty file has none.
// Each valid manifest has exactly one encoding.
const (
	manifestVersion = 1
	flagInline      = 1
)

// Encode returns the manifest's stable binary form.
func (m Manifest) Encode() []byte {
	b := make([]byte, 0, 4*binary.MaxVarintLen64+len(m.Extents)*(cas.Size+4))
	b = binary.AppendUvarint(b, manifestVersion)
	var flags uint64
	if m.Inline {
		flags |= flagInline
	}
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendUvarint(b, uint64(m.Size))
	b = binary.AppendUvarint(b, uint64(len(m.Extents)))
	for _, e := range m.Extents {
		if e.Hash.IsZero() {
			b = binary.AppendUvarint(b, uint64(e.Size)<<1)
			continue
		}
		b = binary.AppendUvarint(b, uint64(e.Size)<<1|1)
		b = append(b, e.Hash[:]...)
	}
	return b
}

// Decode parses the form produced by Encode; damaged input is
// errdefs.ErrCorrupt.
func Decode(b []byte) (Manifest, error) {
	m, err := decode(b)
	if err != nil {
		return Manifest{}, fmt.Errorf("decode manifest: %w: %s", errdefs.ErrCorrupt, err)
	}
	return m, nil
}

type decoder struct{ b []byte }

func (d *decoder) uvarint() (uint64, error) {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		return 0, errors.New("bad varint")
	}
	if n > 1 && d.b[n-1] == 0 {
		return 0, errors.New("overlong varint")
	}
	d.b = d.b[n:]
	return v, nil
}

func decode(b []byte) (Manifest, error) {
	d := decoder{b}
	var hdr [4]uint64
	for i := range hdr {
		v, err := d.uvarint()
		if err != nil {
			return Manifest{}, err
		}
		hdr[i] = v
	}
	version, flags, size, count := hdr[0], hdr[1], hdr[2], hdr[3]
	switch {
	case version != manifestVersion:
		return Manifest{}, fmt.Errorf("unknown version %d", version)
	case flags&^flagInline != 0:
		return Manifest{}, fmt.Errorf("unknown flags %#x", flags)
	case size > math.MaxInt64:
		return Manifest{}, fmt.Errorf("size %d too large", size)
	case count > uint64(len(d.b)):
		return Manifest{}, fmt.Errorf("%d extents in %d bytes", count, len(d.b))
	}
	m := Manifest{Size: int64(size), Inline: flags&flagInline != 0}
	if count > 0 {
		m.Extents = make([]Extent, 0, count)
	}
	var sum uint64
	for range count {
		v, err := d.uvarint()
		if err != nil {
			return Manifest{}, err
		}
		e := Extent{Size: int64(v >> 1)}
		if e.Size == 0 || uint64(e.Size) > size-sum {
			return Manifest{}, fmt.Errorf("extent of %d bytes at offset %d of %d", e.Size, sum, size)
		}
		sum += uint64(e.Size)
		if v&1 == 1 {
			if len(d.b) < cas.Size {
				return Manifest{}, errors.New("truncated hash")
			}
			e.Hash = cas.Hash(d.b[:cas.Size])
			d.b = d.b[cas.Size:]
			if e.Hash.IsZero() {
				return Manifest{}, errors.New("zero chunk hash")
			}
		} else if n := len(m.Extents); n > 0 && m.Extents[n-1].Hash.IsZero() {
			return Manifest{}, errors.New("adjacent holes")
		}
		m.Extents = append(m.Extents, e)
	}
	switch {
	case len(d.b) != 0:
		return Manifest{}, fmt.Errorf("%d trailing bytes", len(d.b))
	case sum != size:
		return Manifest{}, fmt.Errorf("extents cover %d of %d bytes", sum, size)
	case m.Inline && (len(m.Extents) != 1 || m.Extents[0].Hash.IsZero()):
		return Manifest{}, errors.New("inline manifest without exactly one body")
	}
	return m, nil
}

// check reports whether m is internally consistent: non-empty extents that
// sum to Size and, when inline, exactly one body. The error wraps
// errdefs.ErrCorrupt.
func (m Manifest) check() error {
	var sum int64
	for _, e := range m.Extents {
		if e.Size <= 0 || e.Size > m.Size-sum {
			return fmt.Errorf("manifest of %d bytes: %w: bad extent of %d bytes at %d", m.Size, errdefs.ErrCorrupt, e.Size, sum)
		}
		sum += e.Size
	}
	switch {
	case sum != m.Size:
		return fmt.Errorf("manifest of %d bytes: %w: extents cover %d", m.Size, errdefs.ErrCorrupt, sum)
	case m.Inline && (len(m.Extents) != 1 || m.Extents[0].Hash.IsZero()):
		return fmt.Errorf("manifest of %d bytes: %w: inline without exactly one body", m.Size, errdefs.ErrCorrupt)
	}
	return nil
}
