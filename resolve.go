package forkspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/forkspace/forkspace/merge"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// Take says how Resolve settles a conflict.
type Take string

// Ways to resolve a conflict.
const (
	// TakeOurs puts ours' version (as it was before the merge) at the path.
	TakeOurs Take = "ours"
	// TakeTheirs puts theirs' version at the path.
	TakeTheirs Take = "theirs"
	// TakeMarkers writes the three-way merge of the text versions with
	// conflict markers around the clashing lines, to be edited by hand.
	TakeMarkers Take = "markers"
	// TakeContent writes Resolution.Content as the file.
	TakeContent Take = "content"
)

// Resolution settles one conflict.
type Resolution struct {
	Take Take
	// Content is the file's new contents, for TakeContent.
	Content []byte
}

// Resolve settles the conflict at path p (fs.ErrNotExist if there is
// none) and drops it, in one transaction. Resolving the last conflict
// commits the merge: the versions the conflicts referred to are released
// (garbage collection may reclaim them).
func (w *Workspace) Resolve(ctx context.Context, p string, r Resolution) error {
	if err := w.resolve(ctx, p, r); err != nil {
		return fmt.Errorf("resolve %s in %s: %w", p, w.name, err)
	}
	return nil
}

func (w *Workspace) resolve(ctx context.Context, p string, r Resolution) error {
	var c *meta.Conflict
	err := w.store.meta.View(ctx, func(tx meta.Tx) error {
		rows, err := tx.Conflicts(w.id)
		for i := range rows {
			if rows[i].Path == p {
				c = &rows[i]
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	if c == nil {
		return fmt.Errorf("no conflict at %s: %w", p, fs.ErrNotExist)
	}
	version := func(side meta.ConflictSide) (*vfs.FS, error) {
		if side.State == "" || side.Path == "" {
			return nil, nil
		}
		return w.store.Snapshot(ctx, side.State)
	}
	var write func(b *vfs.FS) error
	switch r.Take {
	case TakeOurs, TakeTheirs:
		side := c.Ours
		if r.Take == TakeTheirs {
			side = c.Theirs
		}
		src, err := version(side)
		if err != nil {
			return err
		}
		write = func(b *vfs.FS) error { return putVersion(ctx, b, p, src, side.Path) }
	case TakeContent:
		write = func(b *vfs.FS) error { return putData(ctx, b, p, r.Content) }
	case TakeMarkers:
		var texts [3][]byte
		for i, side := range []meta.ConflictSide{c.Base, c.Ours, c.Theirs} {
			src, err := version(side)
			if err != nil {
				return err
			}
			if texts[i], err = textOf(ctx, src, side.Path); err != nil {
				return err
			}
		}
		res := merge.Text(texts[0], texts[1], texts[2], merge.Labels{Ours: w.name, Base: "base", Theirs: w.mergedFrom(ctx, c.Theirs.State)})
		write = func(b *vfs.FS) error { return putData(ctx, b, p, res.Data) }
	default:
		return fmt.Errorf("%w: resolution %q (want ours, theirs, markers or content)", fs.ErrInvalid, r.Take)
	}
	return w.Batch(ctx, func(b *vfs.FS) error {
		if err := write(b); err != nil {
			return err
		}
		return b.AlsoCommit(func(tx meta.Tx) error {
			if err := tx.DeleteConflict(w.id, p); err != nil {
				return err
			}
			return releaseVersions(tx, w.id)
		})
	})
}

// mergedFrom names the workspace a merged state came from, for markers.
func (w *Workspace) mergedFrom(ctx context.Context, state string) string {
	_, cpID, _ := ParseState(state)
	var name string
	err := w.store.meta.View(ctx, func(tx meta.Tx) error {
		c, err := tx.Checkpoint(cpID)
		if err != nil {
			return err
		}
		src, err := tx.Workspace(c.Source)
		if err == nil {
			name = src.Name
		}
		return err
	})
	if err != nil {
		return "theirs"
	}
	return name
}

// releaseVersions drops the versions kept for conflicts once none is left.
func releaseVersions(tx meta.Tx, wsID string) error {
	left, err := tx.Conflicts(wsID)
	if err != nil || len(left) > 0 {
		return err
	}
	cps, err := tx.Checkpoints(wsID)
	if err != nil {
		return err
	}
	for _, c := range cps {
		if c.Kind == meta.CheckpointConflict {
			if err := tx.DeleteCheckpoint(c.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// putVersion makes p in b hold src's entry at sp (with a directory's
// whole tree), or nothing when src is nil.
func putVersion(ctx context.Context, b *vfs.FS, p string, src *vfs.FS, sp string) error {
	if err := b.RemoveAll(ctx, p); err != nil {
		return err
	}
	if src == nil {
		return nil
	}
	if err := b.MkdirAll(ctx, path.Dir(p), 0o755); err != nil {
		return err
	}
	return copyTree(ctx, b, p, src, sp)
}

// copyTree copies src's entry sp to p in dst, with everything beneath a
// directory.
func copyTree(ctx context.Context, dst *vfs.FS, p string, src *vfs.FS, sp string) error {
	if err := vfs.CopyEntry(ctx, dst, p, src, sp); err != nil {
		return err
	}
	fi, err := src.Lstat(ctx, sp)
	if err != nil || !fi.IsDir() {
		return err
	}
	entries, err := src.ReadDir(ctx, sp)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := copyTree(ctx, dst, path.Join(p, e.Name()), src, path.Join(sp, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// putData makes p a file holding data, keeping the mode of a file there.
func putData(ctx context.Context, b *vfs.FS, p string, data []byte) error {
	perm := fs.FileMode(0o644)
	fi, err := b.Lstat(ctx, p)
	switch {
	case err == nil && fi.Mode().IsRegular():
		perm = fi.Mode().Perm()
	case err == nil:
		if err := b.RemoveAll(ctx, p); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := b.MkdirAll(ctx, path.Dir(p), 0o755); err != nil {
		return err
	}
	return b.WriteFile(ctx, p, data, perm)
}

// textOf reads a text version for conflict markers (empty when absent).
func textOf(ctx context.Context, src *vfs.FS, p string) ([]byte, error) {
	if src == nil {
		return nil, nil
	}
	fi, err := src.Lstat(ctx, p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > vfs.MaxDiffText {
		return nil, fmt.Errorf("%w: %s is not a text file: markers need text; take ours, theirs or give content", fs.ErrInvalid, p)
	}
	data, err := src.ReadFile(ctx, p)
	if err == nil && bytes.IndexByte(data, 0) >= 0 {
		return nil, fmt.Errorf("%w: %s is binary: markers need text; take ours, theirs or give content", fs.ErrInvalid, p)
	}
	return data, err
}
