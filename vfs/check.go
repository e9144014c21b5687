package vfs

import (
	"context"
	"errors"
	"fmt"

	"github.com/forkspace/forkspace/errdefs"
)

// maxCheckProblems bounds how many problems Check reports.
const maxCheckProblems = 20

// Check verifies the structural invariants of the whole state: every entry
// names an inode of the entry's type inside a directory; every inode but
// the root is reachable; link counts match the entries (files) or 2 +
// subdirectories (directories, which have exactly one entry); each inode's
// primary link is one of its entries and the other entries are exactly its
// secondary-link records; symlinks have targets and only files have
// contents; the usage record matches the inodes. Problems are reported
// together in one error wrapping errdefs.ErrCorrupt. Check reads every key:
// its cost is proportional to the size of the state.
func (f *FS) Check(ctx context.Context) error {
	return f.read(ctx, "check", ".", func(t *txn) error { return t.check(ctx) })
}

type checkLink struct {
	parent uint64
	name   string
}

type checkInode struct {
	a       attr
	entries []checkLink
	backs   map[checkLink]bool
	subdirs uint32
	content bool
	target  bool
}

func (t *txn) check(ctx context.Context) error {
	inodes := map[uint64]*checkInode{}
	get := func(ino uint64) *checkInode {
		n := inodes[ino]
		if n == nil {
			n = &checkInode{backs: map[checkLink]bool{}}
			inodes[ino] = n
		}
		return n
	}
	var problems []error
	report := func(format string, args ...any) {
		if len(problems) < maxCheckProblems {
			problems = append(problems, fmt.Errorf("%w: "+format, append([]any{errdefs.ErrCorrupt}, args...)...))
		}
	}
	types := map[uint64]fileType{}
	err := t.view.Scan(ctx, []byte{'i'}, []byte{'j'}, func(k, v []byte) error {
		pk, ok := parseKey(k)
		if !ok {
			report("bad key %x", k)
			return nil
		}
		n := get(pk.ino)
		switch pk.kind {
		case kindAttr:
			a, err := decodeAttr(v)
			if err != nil {
				report("inode %d: %v", pk.ino, err)
				return nil
			}
			n.a = a
		case kindDirent:
			d, err := decodeDirent(v)
			if err != nil {
				report("entry %d/%q: %v", pk.ino, pk.name, err)
				return nil
			}
			c := get(d.ino)
			c.entries = append(c.entries, checkLink{pk.ino, pk.name})
			types[d.ino] = d.typ
			if d.typ == typeDir {
				n.subdirs++
			}
		case kindBacklink:
			p, name, ok := parseBacklink(k)
			if !ok {
				report("bad link record %x", k)
				return nil
			}
			n.backs[checkLink{p, name}] = true
		case kindContent:
			n.content = true
		case kindLink:
			n.target = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	var use Usage
	for ino, n := range inodes {
		if n.a.typ == 0 {
			if ino != rootIno {
				report("inode %d has records but no attributes", ino)
			}
			continue
		}
		if typ, ok := types[ino]; ok && typ != n.a.typ {
			report("inode %d is a %s, its entries say %s", ino, n.a.typ, typ)
		}
		if ino != rootIno {
			use.Entries++
			if len(n.entries) == 0 {
				report("inode %d is unreachable", ino)
			}
		}
		switch n.a.typ {
		case typeDir:
			if want := 2 + n.subdirs; n.a.nlink != want {
				report("directory %d has nlink %d, want %d", ino, n.a.nlink, want)
			}
			if ino != rootIno && len(n.entries) != 1 {
				report("directory %d has %d entries", ino, len(n.entries))
			}
		case typeFile:
			use.Bytes += n.a.size
		case typeSymlink:
			if !n.target {
				report("symlink %d has no target", ino)
			}
		}
		if n.content && n.a.typ != typeFile {
			report("%s %d has contents", n.a.typ, ino)
		}
		if n.a.typ != typeDir && int(n.a.nlink) != len(n.entries) {
			report("inode %d has nlink %d and %d entries", ino, n.a.nlink, len(n.entries))
		}
		if ino == rootIno {
			continue
		}
		primary := checkLink{n.a.parent, n.a.name}
		secondary := map[checkLink]bool{}
		found := false
		for _, l := range n.entries {
			if l == primary && !found {
				found = true
			} else {
				secondary[l] = true
			}
		}
		if !found && len(n.entries) > 0 {
			report("inode %d: primary link %d/%q is not an entry", ino, primary.parent, primary.name)
		}
		if len(secondary) != len(n.backs) {
			report("inode %d: %d secondary entries, %d link records", ino, len(secondary), len(n.backs))
		} else {
			for l := range secondary {
				if !n.backs[l] {
					report("inode %d: entry %d/%q has no link record", ino, l.parent, l.name)
				}
			}
		}
	}
	recorded, err := t.usage(ctx)
	if err != nil {
		return err
	}
	if recorded != use {
		report("usage record %+v, inodes hold %+v", recorded, use)
	}
	return errors.Join(problems...)
}
