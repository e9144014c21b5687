package vfs

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/forkspace/forkspace/errdefs"
)

// maxHops is how many symbolic links one resolution may follow.
const maxHops = 40

// node is a resolved path: the entry name in directory parent, and the inode
// it names (ino 0 when the entry does not exist but its directory does).
// The root is {ino: rootIno, typ: typeDir} with parent 0 and name "".
type node struct {
	parent uint64
	name   string
	ino    uint64
	typ    fileType
}

func (n node) exists() bool { return n.ino != 0 }

// resolve walks the valid path p from the root. Intermediate symbolic links
// are always followed; the final one only when follow is set. Relative
// targets resolve against the link's directory, absolute ones against the
// workspace root, and ".." never climbs above the root, so resolution never
// leaves the workspace. A missing or non-directory intermediate component
// is fs.ErrNotExist or errdefs.ErrNotDir; more than maxHops links is
// errdefs.ErrLoop. A missing final component is not an error.
func (t *txn) resolve(ctx context.Context, p string, follow bool) (node, error) {
	var buf [16]uint64
	n, _, err := t.resolveIn(ctx, append(buf[:0], rootIno), p, follow)
	return n, err
}

// resolveIn is resolve relative to a directory: stack holds the inodes of
// the directories from the root to it (the root alone: p is from the
// root), as dirStack returns them. resolveIn works in stack (its elements
// may be overwritten: callers pass a copy) and returns it as the
// directories from the root to the node's (the node itself when it is a
// directory reached by "." or "..", else its parent).
func (t *txn) resolveIn(ctx context.Context, stack []uint64, p string, follow bool) (node, []uint64, error) {
	comps := splitPath(p)
	hops := 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		last := len(comps) == 0
		switch c {
		case "", ".":
			if last {
				n, err := t.dirNode(ctx, stack)
				return n, stack, err
			}
			continue
		case "..":
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			if last {
				n, err := t.dirNode(ctx, stack)
				return n, stack, err
			}
			continue
		}
		dir := stack[len(stack)-1]
		d, ok, err := t.entry(ctx, dir, c)
		if err != nil {
			return node{}, nil, err
		}
		if !ok {
			if last {
				return node{parent: dir, name: c}, stack, nil
			}
			return node{}, nil, fs.ErrNotExist
		}
		if d.typ == typeSymlink && (!last || follow) {
			if hops++; hops > maxHops {
				return node{}, nil, errdefs.ErrLoop
			}
			target, err := t.readlink(ctx, d.ino)
			if err != nil {
				return node{}, nil, err
			}
			if strings.HasPrefix(target, "/") {
				stack = stack[:1]
			}
			comps = append(strings.Split(target, "/"), comps...)
			continue
		}
		if last {
			return node{parent: dir, name: c, ino: d.ino, typ: d.typ}, stack, nil
		}
		if d.typ != typeDir {
			return node{}, nil, errdefs.ErrNotDir
		}
		stack = append(stack, d.ino)
	}
	n, err := t.dirNode(ctx, stack)
	return n, stack, err
}

// dirStack resolves the directory p (following links) and returns the
// inodes of the directories from the root to it, for resolveIn: a
// missing p is fs.ErrNotExist, another file errdefs.ErrNotDir.
func (t *txn) dirStack(ctx context.Context, p string) ([]uint64, error) {
	return t.dirStackIn(ctx, []uint64{rootIno}, p)
}

// dirStackIn is dirStack of p relative to the directory of stack (which
// it does not change).
func (t *txn) dirStackIn(ctx context.Context, stack []uint64, p string) ([]uint64, error) {
	n, stack, err := t.resolveIn(ctx, slices.Clone(stack), p, true)
	switch {
	case err != nil:
		return nil, err
	case !n.exists():
		return nil, fs.ErrNotExist
	case n.typ != typeDir:
		return nil, errdefs.ErrNotDir
	case stack[len(stack)-1] != n.ino:
		stack = append(stack, n.ino)
	}
	return stack, nil
}

// dirNode returns the node of the directory on top of stack.
func (t *txn) dirNode(ctx context.Context, stack []uint64) (node, error) {
	ino := stack[len(stack)-1]
	if ino == rootIno {
		return node{ino: rootIno, typ: typeDir}, nil
	}
	a, err := t.attr(ctx, ino)
	if err != nil {
		return node{}, err
	}
	return node{parent: stack[len(stack)-2], name: a.name, ino: ino, typ: typeDir}, nil
}

// readlink returns the target of symlink ino.
func (t *txn) readlink(ctx context.Context, ino uint64) (string, error) {
	v, ok, err := t.get(ctx, inoKey(ino, kindLink, ""))
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("read symlink %d: %w", ino, errdefs.ErrCorrupt)
	}
	return string(v), nil
}

// lookup resolves p and fails with fs.ErrNotExist when it does not exist.
func (t *txn) lookup(ctx context.Context, p string, follow bool) (node, error) {
	n, err := t.resolve(ctx, p, follow)
	if err == nil && !n.exists() {
		err = fs.ErrNotExist
	}
	return n, err
}

// lookupDir resolves p (following links) and fails with errdefs.ErrNotDir
// unless it is a directory.
func (t *txn) lookupDir(ctx context.Context, p string) (node, error) {
	n, err := t.lookup(ctx, p, true)
	if err == nil && n.typ != typeDir {
		err = errdefs.ErrNotDir
	}
	return n, err
}
