package vfs

import (
	"encoding/binary"
	"fmt"

	"github.com/forkspace/forkspace/errdefs"
)

// Key space. Inode numbers are big-endian so that all keys of one inode, and
// all entries of one directory, are contiguous and sorted by name.
//
//	'i' ino(8) 'a'        inode attributes (encodeAttr)
//	'i' ino(8) 'b' dir(8) name
//	                      secondary hard link dir/name of a file (the
//	                      primary link is in the attributes)
//	'i' ino(8) 'c'        content manifest (content.Manifest.Encode)
//	'i' ino(8) 'd' name   directory entry: child ino(8) + type byte
//	'i' ino(8) 'l'        symlink target
//	'i' ino(8) 'x' name   extended attribute value
//	'u'                   usage: logical bytes, entries (encodeUsage)
const (
	kindAttr     = 'a'
	kindBacklink = 'b'
	kindContent  = 'c'
	kindDirent   = 'd'
	kindLink     = 'l'
	kindXattr    = 'x'
)

// rootIno is the inode number of every workspace's root directory.
const rootIno uint64 = 1

var usageKey = []byte{'u'}

// inoKey returns the key of one inode's record of the given kind, followed
// by name (for entries and xattrs).
func inoKey(ino uint64, kind byte, name string) []byte {
	k := make([]byte, 10, 10+len(name))
	k[0] = 'i'
	binary.BigEndian.PutUint64(k[1:9], ino)
	k[9] = kind
	return append(k, name...)
}

// inoRange returns the key range [start, end) of one kind of record of an
// inode (all entries of a directory, all xattrs of an inode).
func inoRange(ino uint64, kind byte) (start, end []byte) {
	return inoKey(ino, kind, ""), inoKey(ino, kind+1, "")
}

// inoSpan returns the key range holding every record of an inode.
func inoSpan(ino uint64) (start, end []byte) {
	start = inoKey(ino, 0, "")[:9]
	end = inoKey(ino+1, 0, "")[:9]
	return start, end
}

// backlinkKey returns the key recording that dir/name is a secondary link
// of file ino. Its value is backlinkValue.
func backlinkKey(ino, dir uint64, name string) []byte {
	k := inoKey(ino, kindBacklink, "12345678"+name)
	binary.BigEndian.PutUint64(k[10:18], dir)
	return k
}

var backlinkValue = []byte{1}

// parseBacklink decodes the directory and name of a backlink key.
func parseBacklink(k []byte) (dir uint64, name string, ok bool) {
	if len(k) < 18 {
		return 0, "", false
	}
	return binary.BigEndian.Uint64(k[10:18]), string(k[18:]), true
}

// parsedKey is a decoded key of the inode space.
type parsedKey struct {
	ino  uint64
	kind byte
	name string
}

// parseKey decodes an inode key; ok is false for other keys (usage).
func parseKey(k []byte) (pk parsedKey, ok bool) {
	if len(k) < 10 || k[0] != 'i' {
		return pk, false
	}
	return parsedKey{ino: binary.BigEndian.Uint64(k[1:9]), kind: k[9], name: string(k[10:])}, true
}

// dirent is the value of a directory entry.
type dirent struct {
	ino uint64
	typ fileType
}

func encodeDirent(ino uint64, typ fileType) []byte {
	v := make([]byte, 9)
	binary.BigEndian.PutUint64(v, ino)
	v[8] = byte(typ)
	return v
}

func decodeDirent(v []byte) (dirent, error) {
	if len(v) != 9 || !fileType(v[8]).valid() {
		return dirent{}, fmt.Errorf("decode entry: %w", errdefs.ErrCorrupt)
	}
	return dirent{ino: binary.BigEndian.Uint64(v), typ: fileType(v[8])}, nil
}

// Usage is what a workspace holds: Bytes are the logical sizes of regular
// files, counted once per inode; Entries are the inodes other than the root.
type Usage struct {
	Bytes   int64 `json:"bytes"`
	Entries int64 `json:"entries"`
}

func encodeUsage(u Usage) []byte {
	v := make([]byte, 16)
	binary.BigEndian.PutUint64(v, uint64(u.Bytes))
	binary.BigEndian.PutUint64(v[8:], uint64(u.Entries))
	return v
}

func decodeUsage(v []byte) (Usage, error) {
	if len(v) != 16 {
		return Usage{}, fmt.Errorf("decode usage: %w", errdefs.ErrCorrupt)
	}
	return Usage{Bytes: int64(binary.BigEndian.Uint64(v)), Entries: int64(binary.BigEndian.Uint64(v[8:]))}, nil
}
