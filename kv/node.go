package kv

import (
	"encoding/binary"
	"fmt"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
)

// nodeFormat is the first byte of every encoded node.
const nodeFormat = 1

// maxKeyLen and maxValueLen bound what a node may hold; longer input is
// rejected by Apply and by the decoder.
const (
	maxKeyLen   = 8 << 10
	maxValueLen = 1 << 20
	maxLevel    = 64
)

// node is a decoded tree node. A leaf (level 0) holds keys and values; an
// internal node holds, for each child, the child's largest key and hash.
// Keys are strictly ascending.
type node struct {
	level int
	keys  [][]byte
	vals  [][]byte   // leaf only
	kids  []cas.Hash // internal only
	size  int        // encoded size
	mem   int        // bytes the decoded node holds, for cache accounting
}

// nodeOverhead is what a cached node costs beside its items: the struct,
// its cache entry, list element and map slot.
const nodeOverhead = 256

// footprint returns the bytes n holds in memory given held, the bytes of
// the buffers its keys and values live in: its slice headers and child
// hashes besides.
func (n *node) footprint(held int) int {
	const header = 24 // a []byte
	return nodeOverhead + held + header*(cap(n.keys)+cap(n.vals)) + cas.Size*cap(n.kids)
}

func (n *node) leaf() bool { return n.level == 0 }

func (n *node) lastKey() []byte { return n.keys[len(n.keys)-1] }

// encode returns the node's canonical bytes: format, level, count, then each
// item as (shared prefix length with the previous key, suffix) followed by
// the value (leaf) or the child hash (internal).
func (n *node) encode() []byte {
	size := 3 + binary.MaxVarintLen64
	for i, k := range n.keys {
		size += 2*binary.MaxVarintLen64 + len(k)
		if n.leaf() {
			size += binary.MaxVarintLen64 + len(n.vals[i])
		} else {
			size += cas.Size
		}
	}
	b := make([]byte, 0, size)
	b = append(b, nodeFormat, byte(n.level))
	b = binary.AppendUvarint(b, uint64(len(n.keys)))
	var prev []byte
	for i, k := range n.keys {
		shared := commonPrefix(prev, k)
		b = binary.AppendUvarint(b, uint64(shared))
		b = binary.AppendUvarint(b, uint64(len(k)-shared))
		b = append(b, k[shared:]...)
		if n.leaf() {
			b = binary.AppendUvarint(b, uint64(len(n.vals[i])))
			b = append(b, n.vals[i]...)
		} else {
			b = append(b, n.kids[i][:]...)
		}
		prev = k
	}
	return b
}

// decodeNode parses bytes produced by encode. Any malformation, including
// keys out of order, is errdefs.ErrCorrupt; it never panics.
func decodeNode(b []byte) (*node, error) {
	corrupt := func(what string) error { return fmt.Errorf("decode node: %w: %s", errdefs.ErrCorrupt, what) }
	if len(b) < 3 {
		return nil, corrupt("truncated header")
	}
	if b[0] != nodeFormat {
		return nil, corrupt(fmt.Sprintf("unknown format %d", b[0]))
	}
	n := &node{level: int(b[1]), size: len(b)}
	if n.level > maxLevel {
		return nil, corrupt("level out of range")
	}
	r := reader{b: b[2:]}
	count := r.uvarint()
	if r.err || count == 0 || count > uint64(len(b)) {
		return nil, corrupt("bad item count")
	}
	n.keys = make([][]byte, 0, count)
	if n.leaf() {
		n.vals = make([][]byte, 0, count)
	} else {
		n.kids = make([]cas.Hash, 0, count)
	}
	var prev []byte
	// The keys are cut from one arena (a new one when it fills) rather
	// than allocated one by one: a leaf holds about 32. The values (and
	// child hashes) stay in b.
	var arena []byte
	held := len(b)
	for i := uint64(0); i < count; i++ {
		shared, suffix := r.uvarint(), r.uvarint()
		if r.err || shared > uint64(len(prev)) || shared+suffix > maxKeyLen {
			return nil, corrupt("bad key length")
		}
		tail := r.bytes(suffix)
		if r.err {
			return nil, corrupt("truncated key")
		}
		if shared < uint64(len(prev)) && len(tail) > 0 && tail[0] == prev[shared] {
			return nil, corrupt("key prefix not shared maximally")
		}
		if klen := int(shared + suffix); cap(arena)-len(arena) < klen {
			arena = make([]byte, 0, max(len(b), klen))
			held += cap(arena)
		}
		start := len(arena)
		arena = append(append(arena, prev[:shared]...), tail...)
		key := arena[start:len(arena):len(arena)]
		if i > 0 && compare(prev, key) >= 0 {
			return nil, corrupt("keys out of order")
		}
		n.keys = append(n.keys, key)
		if n.leaf() {
			vlen := r.uvarint()
			if r.err || vlen > maxValueLen {
				return nil, corrupt("bad value length")
			}
			v := r.bytes(vlen)
			if r.err {
				return nil, corrupt("truncated value")
			}
			n.vals = append(n.vals, v)
		} else {
			h := r.bytes(cas.Size)
			if r.err {
				return nil, corrupt("truncated child hash")
			}
			n.kids = append(n.kids, cas.Hash(h))
		}
		prev = key
	}
	if len(r.b) != 0 {
		return nil, corrupt("trailing bytes")
	}
	n.mem = n.footprint(held)
	return n, nil
}

// reader consumes a byte slice; the first failure sets err and every later
// read returns zero values.
type reader struct {
	b   []byte
	err bool
}

func (r *reader) uvarint() uint64 {
	if r.err {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || (n > 1 && r.b[n-1] == 0) { // overflow, truncation or a non-minimal encoding
		r.err = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if r.err || n > uint64(len(r.b)) {
		r.err = true
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
