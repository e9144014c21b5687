package cas

import (
	"encoding/hex"
	"fmt"
	"io/fs"

	"github.com/zeebo/blake3"
)

// Size is the length of a Hash in bytes.
const Size = 32

// Hash is the BLAKE3-256 digest of an immutable byte string. The zero Hash
// is never the digest of real data and means "none" (an empty tree, a hole).
type Hash [Size]byte

// Sum returns the content address of data.
func Sum(data []byte) Hash { return Hash(blake3.Sum256(data)) }

// IsZero reports whether h is the zero Hash.
func (h Hash) IsZero() bool { return h == Hash{} }

// String returns the lowercase hex form of h.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// Short returns the first 12 hex digits of h, for people.
func (h Hash) Short() string { return h.String()[:12] }

// Parse decodes the hex form produced by String.
func Parse(s string) (Hash, error) {
	var h Hash
	if len(s) != 2*Size {
		return h, fmt.Errorf("parse hash %q: %w: want %d hex digits", s, fs.ErrInvalid, 2*Size)
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, fmt.Errorf("parse hash %q: %w: %v", s, fs.ErrInvalid, err)
	}
	return h, nil
}

// FromBytes converts a 32-byte slice into a Hash.
func FromBytes(b []byte) (Hash, error) {
	var h Hash
	if len(b) != Size {
		return h, fmt.Errorf("hash from %d bytes: %w", len(b), fs.ErrInvalid)
	}
	copy(h[:], b)
	return h, nil
}

// Verify returns an error wrapping errdefs.ErrCorrupt (via the caller) when
// data does not hash to h. It returns true when the content matches.
func Verify(h Hash, data []byte) bool { return Sum(data) == h }
