package gitmount

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/forkspace/forkspace/mount"
)

// writeTree writes tree's entries under dir ("" for the mount root)
// through api, depth first, in git's (name) order.
func writeTree(ctx context.Context, repo *git.Repository, tree *object.Tree, dir string, api mount.WriteAPI) error {
	for _, e := range tree.Entries {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("materialize git tree: %w", err)
		}
		rel := path.Join(dir, e.Name)
		if !fs.ValidPath(rel) || path.Base(rel) != e.Name {
			return fmt.Errorf("materialize git tree: %w: entry name %q", fs.ErrInvalid, e.Name)
		}
		switch e.Mode {
		case filemode.Dir:
			sub, err := repo.TreeObject(e.Hash)
			if err != nil {
				return wrap("read git tree "+rel, err)
			}
			if err := api.Mkdir(rel, 0o755); err != nil {
				return fmt.Errorf("materialize git tree: %w", err)
			}
			if err := writeTree(ctx, repo, sub, rel, api); err != nil {
				return err
			}
		case filemode.Regular, filemode.Deprecated, filemode.Executable:
			data, err := blob(repo, e.Hash)
			if err != nil {
				return wrap("read git blob "+rel, err)
			}
			mode := fs.FileMode(0o644)
			if e.Mode == filemode.Executable {
				mode = 0o755
			}
			if err := api.WriteFile(rel, data, mode); err != nil {
				return fmt.Errorf("materialize git tree: %w", err)
			}
		case filemode.Symlink:
			target, err := blob(repo, e.Hash)
			if err != nil {
				return wrap("read git blob "+rel, err)
			}
			if err := api.Symlink(string(target), rel); err != nil {
				return fmt.Errorf("materialize git tree: %w", err)
			}
		}
		// filemode.Submodule: another repository, not materialized.
	}
	return nil
}

// blob reads a blob's bytes.
func blob(repo *git.Repository, h plumbing.Hash) ([]byte, error) {
	b, err := repo.BlobObject(h)
	if err != nil {
		return nil, err
	}
	r, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
