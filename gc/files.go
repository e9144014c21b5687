package gc

import (
	"encoding/binary"
	"fmt"
	"path"
	"slices"

	"github.com/forkspace/forkspace/cas"
)

// maxFilesNamed bounds the files a Problem names.
const maxFilesNamed = 10

// fileIndex remembers, during a check's walk, which files reference each
// body and blob and the directory entries that name them, so a damaged
// object's problem can say which files it breaks. Subtrees shared by
// several workspaces are walked once: a file is named as the first
// workspace walked has it.
type fileIndex struct {
	owner string              // the workspace being walked
	names map[uint64]dirEntry // inode → an entry naming it
	refs  map[cas.Hash][]fileRef
}

type dirEntry struct {
	parent uint64
	name   string
}

type fileRef struct {
	owner string
	ino   uint64
}

func newFileIndex() *fileIndex {
	return &fileIndex{names: map[uint64]dirEntry{}, refs: map[cas.Hash][]fileRef{}}
}

// dirEntry records key/value if it is a directory entry: 'i' parent(8)
// 'd' name → child(8) type(1), the vfs key layout.
func (x *fileIndex) entry(key, value []byte) {
	if len(key) > 10 && key[0] == 'i' && key[9] == 'd' && len(value) == 9 {
		x.names[binary.BigEndian.Uint64(value)] = dirEntry{binary.BigEndian.Uint64(key[1:9]), string(key[10:])}
	}
}

// ref records that the file of manifest key ('i' ino(8) 'c') references h.
func (x *fileIndex) ref(key []byte, h cas.Hash) {
	if len(key) < 9 {
		return
	}
	r := fileRef{x.owner, binary.BigEndian.Uint64(key[1:9])}
	if refs := x.refs[h]; len(refs) < maxFilesNamed && !slices.Contains(refs, r) {
		x.refs[h] = append(refs, r)
	}
}

// files names the files referencing h: "workspace:/path", or the inode
// number when no entry names it.
func (x *fileIndex) files(h cas.Hash) []string {
	var out []string
	for _, r := range x.refs[h] {
		out = append(out, x.name(r))
	}
	return out
}

func (x *fileIndex) name(r fileRef) string {
	var parts []string
	for ino := r.ino; ino != 1; {
		e, ok := x.names[ino]
		if !ok || len(parts) > 4096 {
			return fmt.Sprintf("%s:inode %d", r.owner, r.ino)
		}
		parts = append(parts, e.name)
		ino = e.parent
	}
	slices.Reverse(parts)
	return r.owner + ":/" + path.Join(parts...)
}
