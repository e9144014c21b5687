package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/forkspace/forkspace/cas"
)

// savedFile is the file in a state directory where Close leaves what the
// process knew of the work dir, so that a fork's first run in another
// process can seed from it (seed).
const savedFile = "manifest"

// savedMagic starts a saved file (its format's version).
const savedMagic = "forkspace-manifest-1\n"

// saved is a work dir's state as a process left it: the token it last
// wrote (the state is stale once the token file says otherwise), the
// workspace root the dir mirrors, the paths pending a visit, and the
// manifest.
type saved struct {
	token   string
	synced  cas.Hash
	pending map[string]bool
	man     manifest
}

// save writes st's state into stateDir (a temporary file renamed into
// place) when the manifest is known. A saved file left from earlier is
// harmless: its token no longer matches once a run succeeded since, and
// seeding checks every entry's host stat before taking it.
func (st *dirState) save(stateDir string) error {
	name := filepath.Join(stateDir, savedFile)
	if st.man == nil || st.token == "" {
		return nil
	}
	sv := saved{token: st.token, synced: st.synced, pending: st.pending, man: st.man}
	tmp := name + "." + randomName()
	if err := os.WriteFile(tmp, sv.encode(), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		return errors.Join(err, os.Remove(tmp))
	}
	return nil
}

// loadSaved reads the state a process left in stateDir.
func loadSaved(stateDir string) (*saved, error) {
	b, err := os.ReadFile(filepath.Join(stateDir, savedFile))
	if err != nil {
		return nil, err
	}
	return decodeSaved(b)
}

func (sv *saved) encode() []byte {
	b := []byte(savedMagic)
	str := func(s string) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	b8 := func(v bool) {
		if v {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	str(sv.token)
	b = append(b, sv.synced[:]...)
	b = binary.AppendUvarint(b, uint64(len(sv.pending)))
	for p, sub := range sv.pending {
		str(p)
		b8(sub)
	}
	b = binary.AppendUvarint(b, uint64(len(sv.man)))
	for p, e := range sv.man {
		str(p)
		b = append(b, byte(e.kind))
		b = binary.AppendUvarint(b, uint64(e.perm))
		b = binary.AppendVarint(b, e.size)
		b = binary.AppendVarint(b, e.mtime)
		b = append(b, e.hash[:]...)
		str(e.target)
		b = binary.AppendUvarint(b, e.hostIno)
		b = binary.AppendVarint(b, e.hostCtime)
		b8(e.racy)
		b = binary.AppendUvarint(b, e.wsIno)
		b = binary.AppendVarint(b, e.wsCtime)
	}
	return b
}

// errSaved: a saved file that is not one this version wrote whole.
var errSaved = errors.New("saved manifest unreadable")

func decodeSaved(b []byte) (*saved, error) {
	if len(b) < len(savedMagic) || string(b[:len(savedMagic)]) != savedMagic {
		return nil, errSaved
	}
	d := savedDecoder{b: b[len(savedMagic):]}
	sv := &saved{token: d.str(), pending: map[string]bool{}, man: manifest{}}
	d.bytes(sv.synced[:])
	for n := d.uvarint(); n > 0 && d.err == nil; n-- {
		p := d.str()
		sv.pending[p] = d.byte() == 1
	}
	for n := d.uvarint(); n > 0 && d.err == nil; n-- {
		p := d.str()
		e := &entry{kind: kind(d.byte())}
		e.perm = fs.FileMode(d.uvarint())
		e.size, e.mtime = d.varint(), d.varint()
		d.bytes(e.hash[:])
		e.target = d.str()
		e.hostIno, e.hostCtime = d.uvarint(), d.varint()
		e.racy = d.byte() == 1
		e.wsIno, e.wsCtime = d.uvarint(), d.varint()
		sv.man[p] = e
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %v", errSaved, d.err)
	}
	return sv, nil
}

// savedDecoder reads a saved file; the first error sticks.
type savedDecoder struct {
	b   []byte
	err error
}

func (d *savedDecoder) fail() { d.err, d.b = errSaved, nil }

func (d *savedDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// varint reads what binary.AppendVarint wrote: a zig-zag uvarint.
func (d *savedDecoder) varint() int64 {
	u := d.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (d *savedDecoder) bytes(dst []byte) {
	if len(d.b) < len(dst) {
		d.fail()
		return
	}
	d.b = d.b[copy(dst, d.b):]
}

func (d *savedDecoder) byte() byte {
	var v [1]byte
	d.bytes(v[:])
	return v[0]
}

func (d *savedDecoder) str() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
