package vfs

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"time"

	"github.com/forkspace/forkspace/errdefs"
)

// fileType is the kind of an inode.
type fileType uint8

const (
	typeFile    fileType = 1
	typeDir     fileType = 2
	typeSymlink fileType = 3
	// Special files (Mknod): no contents; a device's number is kept in
	// the attribute record's size field (its size is 0).
	typeFIFO     fileType = 4
	typeSocket   fileType = 5
	typeCharDev  fileType = 6
	typeBlockDev fileType = 7
)

func (t fileType) valid() bool { return t >= typeFile && t <= typeBlockDev }

// special reports a FIFO, socket or device node.
func (t fileType) special() bool { return t >= typeFIFO }

// device reports a character or block device node.
func (t fileType) device() bool { return t == typeCharDev || t == typeBlockDev }

// typeModes are the fs.FileMode type bits of each type.
var typeModes = [...]fs.FileMode{
	typeDir: fs.ModeDir, typeSymlink: fs.ModeSymlink, typeFIFO: fs.ModeNamedPipe,
	typeSocket: fs.ModeSocket, typeCharDev: fs.ModeDevice | fs.ModeCharDevice, typeBlockDev: fs.ModeDevice,
}

// mode returns the fs.FileMode type bits of t.
func (t fileType) mode() fs.FileMode {
	if int(t) < len(typeModes) {
		return typeModes[t]
	}
	return 0
}

// typeOfMode is the type whose mode bits m has (regular files: none).
func typeOfMode(m fs.FileMode) (fileType, bool) {
	tm := m & fs.ModeType
	if tm == 0 {
		return typeFile, true
	}
	for t, bits := range typeModes {
		if bits != 0 && bits == tm {
			return fileType(t), true
		}
	}
	return 0, false
}

// typeNames are the names Change.Type uses.
var typeNames = [...]string{
	typeFile: "file", typeDir: "dir", typeSymlink: "symlink", typeFIFO: "fifo",
	typeSocket: "socket", typeCharDev: "chardev", typeBlockDev: "blockdev",
}

// String names the type as Change.Type does.
func (t fileType) String() string {
	if t.valid() {
		return typeNames[t]
	}
	return "file"
}

// attrVersion is the first byte of every encoded attribute record.
const attrVersion = 1

// permBits are the Unix permission bits an inode keeps: rwx for user,
// group and other plus setuid, setgid and sticky.
const permBits = 0o7777

// attr is an inode's attributes. Times are Unix nanoseconds. parent and
// name are the primary link (the entry that created the inode, or the
// destination of its last rename); a directory has exactly one link.
type attr struct {
	typ                 fileType
	perm                uint32 // Unix bits, permBits
	uid, gid            uint32
	nlink               uint32
	size                int64
	atime, mtime, ctime int64
	parent              uint64
	name                string
}

// encodeAttr returns the stable binary form of a: a version byte, the type
// byte, then unsigned varints (perm, uid, gid, nlink, size, parent), signed
// varints (atime, mtime, ctime) and the length-prefixed name.
func encodeAttr(a *attr) []byte {
	b := make([]byte, 0, 48+len(a.name))
	b = append(b, attrVersion, byte(a.typ))
	b = binary.AppendUvarint(b, uint64(a.perm))
	b = binary.AppendUvarint(b, uint64(a.uid))
	b = binary.AppendUvarint(b, uint64(a.gid))
	b = binary.AppendUvarint(b, uint64(a.nlink))
	b = binary.AppendUvarint(b, uint64(a.size))
	b = binary.AppendUvarint(b, a.parent)
	b = binary.AppendVarint(b, a.atime)
	b = binary.AppendVarint(b, a.mtime)
	b = binary.AppendVarint(b, a.ctime)
	b = binary.AppendUvarint(b, uint64(len(a.name)))
	return append(b, a.name...)
}

// attrDecoder reads varints and remembers the first failure.
type attrDecoder struct {
	b   []byte
	bad bool
}

func (d *attrDecoder) uvarint(limit uint64) uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > limit {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *attrDecoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

// decodeAttr parses the form produced by encodeAttr. Damaged input fails
// with errdefs.ErrCorrupt; decodeAttr never panics.
func decodeAttr(b []byte) (attr, error) {
	var a attr
	if len(b) < 2 || b[0] != attrVersion || !fileType(b[1]).valid() {
		return a, fmt.Errorf("decode attributes: %w: bad header", errdefs.ErrCorrupt)
	}
	a.typ = fileType(b[1])
	d := attrDecoder{b: b[2:]}
	a.perm = uint32(d.uvarint(permBits))
	a.uid = uint32(d.uvarint(1<<32 - 1))
	a.gid = uint32(d.uvarint(1<<32 - 1))
	a.nlink = uint32(d.uvarint(1<<32 - 1))
	a.size = int64(d.uvarint(1<<63 - 1))
	a.parent = d.uvarint(1<<64 - 1)
	a.atime = d.varint()
	a.mtime = d.varint()
	a.ctime = d.varint()
	n := d.uvarint(MaxNameLen)
	if d.bad || uint64(len(d.b)) != n {
		return attr{}, fmt.Errorf("decode attributes: %w: bad fields", errdefs.ErrCorrupt)
	}
	a.name = string(d.b)
	return a, nil
}

// fileMode converts the inode's type and Unix bits to an fs.FileMode.
func (a *attr) fileMode() fs.FileMode {
	m := fs.FileMode(a.perm&0o777) | a.typ.mode()
	if a.perm&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if a.perm&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if a.perm&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// UnixMode converts the permission and special bits (setuid, setgid,
// sticky) of an fs.FileMode to Unix mode bits.
func UnixMode(m fs.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		p |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		p |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		p |= 0o1000
	}
	return p
}

// Attr is the full attribute set of an inode, returned by FileInfo.Sys.
type Attr struct {
	Ino   uint64
	Mode  fs.FileMode
	Uid   uint32
	Gid   uint32
	Nlink uint32
	Size  int64
	// Rdev is a device node's device number (Linux encoding, as
	// unix.Mkdev makes it); 0 for every other type.
	Rdev  uint64
	Atime time.Time
	Mtime time.Time
	Ctime time.Time
}

// statSize is the size stat reports: a device keeps its number in size.
func (a *attr) statSize() int64 {
	if a.typ.device() {
		return 0
	}
	return a.size
}

// rdev is a device node's number (0 for other types).
func (a *attr) rdev() uint64 {
	if a.typ.device() {
		return uint64(a.size)
	}
	return 0
}

// fileInfo implements fs.FileInfo over an inode.
type fileInfo struct {
	name string
	ino  uint64
	a    attr
}

var _ fs.FileInfo = (*fileInfo)(nil)

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.a.statSize() }
func (fi *fileInfo) Mode() fs.FileMode  { return fi.a.fileMode() }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(0, fi.a.mtime) }
func (fi *fileInfo) IsDir() bool        { return fi.a.typ == typeDir }
func (fi *fileInfo) String() string     { return fs.FormatFileInfo(fi) }

// Sys returns an *Attr.
func (fi *fileInfo) Sys() any {
	return &Attr{
		Ino: fi.ino, Mode: fi.a.fileMode(), Uid: fi.a.uid, Gid: fi.a.gid, Nlink: fi.a.nlink,
		Size: fi.a.statSize(), Rdev: fi.a.rdev(), Atime: time.Unix(0, fi.a.atime), Mtime: time.Unix(0, fi.a.mtime),
		Ctime: time.Unix(0, fi.a.ctime),
	}
}
