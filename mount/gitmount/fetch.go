package gitmount

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
)

// allRefs are the refspecs of a full fetch (a ref that is a commit hash).
var allRefs = []config.RefSpec{"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"}

// fetch lists the remote's refs, picks the one to fetch and fetches it into
// memory (depth 1 unless the ref is a commit hash or Options.Full). It
// returns the repository and the revision to resolve in it.
func (m *Mount) fetch(ctx context.Context) (*git.Repository, string, error) {
	repo, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		return nil, "", fmt.Errorf("init git storage: %w", err)
	}
	remote, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{m.url}})
	if err != nil {
		return nil, "", fmt.Errorf("create git remote: %w", err)
	}
	op := "fetch " + m.url
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: m.authMethod()})
	if err != nil {
		return nil, "", wrap(op, err)
	}
	name, err := pick(refs, m.ref)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", op, err)
	}
	opts := &git.FetchOptions{Auth: m.authMethod(), Tags: git.NoTags}
	rev := name.String()
	if name == "" {
		// A commit hash: fetch every branch and tag in full, resolve locally.
		opts.RefSpecs, rev = allRefs, m.ref
	} else {
		opts.RefSpecs = []config.RefSpec{config.RefSpec("+" + rev + ":" + rev)}
		if !m.full {
			opts.Depth = 1
		}
	}
	if m.full {
		opts.RefSpecs = allRefs
	}
	if err := remote.FetchContext(ctx, opts); err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil, "", wrap(op, err)
	}
	return repo, rev, nil
}

// pick finds the advertised ref that ref names: "" or "HEAD" is the
// branch the remote's HEAD points to, otherwise a full ref name, a branch
// or a tag. A ref that looks like a commit hash yields "" (fetch
// everything). Anything else is ErrRefNotFound.
func pick(refs []*plumbing.Reference, ref string) (plumbing.ReferenceName, error) {
	byName := map[plumbing.ReferenceName]*plumbing.Reference{}
	for _, r := range refs {
		byName[r.Name()] = r
	}
	if ref == "" || ref == "HEAD" {
		head, ok := byName[plumbing.HEAD]
		if !ok {
			return "", fmt.Errorf("%w: %w: the remote advertises no HEAD", fs.ErrNotExist, ErrRefNotFound)
		}
		if head.Type() == plumbing.SymbolicReference {
			return head.Target(), nil
		}
		for _, r := range refs {
			if r.Name().IsBranch() && r.Hash() == head.Hash() {
				return r.Name(), nil
			}
		}
		return "", fmt.Errorf("%w: %w: HEAD names no branch", fs.ErrNotExist, ErrRefNotFound)
	}
	for _, n := range []plumbing.ReferenceName{
		plumbing.ReferenceName(ref),
		plumbing.NewBranchReferenceName(ref),
		plumbing.NewTagReferenceName(ref),
	} {
		if _, ok := byName[n]; ok {
			return n, nil
		}
	}
	if isHexPrefix(ref) {
		return "", nil
	}
	return "", fmt.Errorf("%w: %w: %q is no branch, tag or commit", fs.ErrNotExist, ErrRefNotFound, ref)
}

// isHexPrefix reports whether s could abbreviate a commit hash.
func isHexPrefix(s string) bool {
	if len(s) < 4 || len(s) > 40 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
