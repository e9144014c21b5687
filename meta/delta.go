package meta

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/forkspace/forkspace/errdefs"
)

// A delta is staging rows encoded as one value, the form SQL drivers store
// them in (docs/decisions/025): a commit's rows are one record of a
// workspace's staging log, a checkpoint's delta one row. The encoding is a
// format version byte, then per row the key, a flags byte, the value and
// the Seq, lengths and Seq as varints. An empty value reads back as nil.
const deltaVersion = 1

// deltaDeleted flags a tombstone.
const deltaDeleted = 1

// AppendDelta appends the encoding of rows to dst.
func AppendDelta(dst []byte, rows []Staged) []byte {
	size := 1
	for _, r := range rows {
		size += len(r.Key) + len(r.Value) + 3*binary.MaxVarintLen64 + 1
	}
	dst = slices.Grow(dst, size)
	dst = append(dst, deltaVersion)
	for _, r := range rows {
		dst = binary.AppendUvarint(dst, uint64(len(r.Key)))
		dst = append(dst, r.Key...)
		var flags byte
		if r.Deleted {
			flags |= deltaDeleted
		}
		dst = append(dst, flags)
		dst = binary.AppendUvarint(dst, uint64(len(r.Value)))
		dst = append(dst, r.Value...)
		dst = binary.AppendVarint(dst, r.Seq)
	}
	return dst
}

// ParseDelta calls fn with each row of an encoded delta, in order. Keys and
// values alias b. A malformed delta is errdefs.ErrCorrupt.
func ParseDelta(b []byte, fn func(Staged) error) error {
	if len(b) == 0 || b[0] != deltaVersion {
		return fmt.Errorf("%w: staging delta: unknown format", errdefs.ErrCorrupt)
	}
	b = b[1:]
	bytesOf := func(what string) ([]byte, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, fmt.Errorf("%w: staging delta: truncated %s", errdefs.ErrCorrupt, what)
		}
		out := b[k : k+int(n) : k+int(n)]
		b = b[k+int(n):]
		return out, nil
	}
	for len(b) > 0 {
		var (
			r   Staged
			err error
		)
		if r.Key, err = bytesOf("key"); err != nil {
			return err
		}
		if len(b) == 0 || b[0]&^deltaDeleted != 0 {
			return fmt.Errorf("%w: staging delta: bad flags", errdefs.ErrCorrupt)
		}
		r.Deleted = b[0]&deltaDeleted != 0
		b = b[1:]
		if r.Value, err = bytesOf("value"); err != nil {
			return err
		}
		if len(r.Value) == 0 {
			r.Value = nil
		}
		seq, k := binary.Varint(b)
		if k <= 0 {
			return fmt.Errorf("%w: staging delta: truncated seq", errdefs.ErrCorrupt)
		}
		r.Seq, b = seq, b[k:]
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}
