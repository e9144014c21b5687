package gitmount

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/forkspace/forkspace/mount"
)

// Mount is a git repository at a ref. It implements mount.Eager; it is
// immutable and safe for concurrent use.
type Mount struct {
	url    string // without user information
	local  string // repository directory, "" for a remote
	ref    string
	subdir string // cleaned, "" for the whole tree
	full   bool
	auth   *githttp.BasicAuth // nil without a token
}

var _ mount.Eager = (*Mount)(nil)

// Open checks the options and builds a Mount; it does not contact the
// server or open the repository (Materialize does). Errors wrap
// fs.ErrInvalid.
func Open(o Options) (*Mount, error) {
	bad := func(format string, args ...any) (*Mount, error) {
		return nil, fmt.Errorf("open git mount: %w: %s", fs.ErrInvalid, fmt.Sprintf(format, args...))
	}
	if o.URL == "" {
		return bad("url is required")
	}
	u, err := url.Parse(o.URL)
	if err != nil {
		return bad("url: %v", err)
	}
	if _, hasPassword := u.User.Password(); hasPassword {
		return bad("a password in the url is not allowed; set GIT_TOKEN or Options.Token")
	}
	m := &Mount{ref: o.Ref, full: o.Full}
	switch u.Scheme {
	case "", "file":
		if u.Host != "" {
			return bad("file url %q has a host", u.Redacted())
		}
		if m.local = localPath(u); m.local == "" {
			return bad("local repository path is empty")
		}
	case "http", "https":
		if u.Host == "" {
			return bad("url %q has no host", u.Redacted())
		}
		if tok := o.token(u.Hostname()); tok != "" {
			user := o.Username
			if user == "" && u.User != nil {
				user = u.User.Username()
			}
			if user == "" {
				user = DefaultUsername
			}
			m.auth = &githttp.BasicAuth{Username: user, Password: tok}
		}
	default:
		return bad("scheme %q (want http, https, file or a local path)", u.Scheme)
	}
	m.url = u.Redacted()
	if sub := strings.Trim(o.Subdir, "/"); sub != "" {
		if !fs.ValidPath(sub) {
			return bad("subdir %q is not a clean relative path", o.Subdir)
		}
		m.subdir = sub
	}
	return m, nil
}

// Kind is "git".
func (m *Mount) Kind() string { return "git" }

// Materialize resolves the ref and writes the tree (or the subtree)
// through api: every directory (Mkdir 0o755), every file (WriteFile with
// 0o755 or 0o644) and every symlink. Nothing is written when the
// repository, the ref or the subtree cannot be resolved. An error from api
// stops the walk and is returned wrapped.
func (m *Mount) Materialize(ctx context.Context, api mount.WriteAPI) error {
	repo, rev, err := m.repository(ctx)
	if err != nil {
		return err
	}
	tree, err := m.tree(repo, rev)
	if err != nil {
		return err
	}
	return writeTree(ctx, repo, tree, "", api)
}

// repository opens the local repository in place or fetches the remote
// one into memory, and returns the revision to resolve in it.
func (m *Mount) repository(ctx context.Context) (*git.Repository, string, error) {
	if m.local == "" {
		return m.fetch(ctx)
	}
	repo, err := git.PlainOpen(m.local)
	if err != nil {
		return nil, "", wrap("open git repository "+m.local, err)
	}
	return repo, m.ref, nil
}

// tree resolves rev ("" is HEAD) to its commit's tree, or the subtree.
func (m *Mount) tree(repo *git.Repository, rev string) (*object.Tree, error) {
	op := "resolve " + m.url + "#" + m.ref
	var hash plumbing.Hash
	if rev == "" {
		head, err := repo.Head()
		if err != nil {
			return nil, refNotFound(op, "HEAD: "+err.Error())
		}
		hash = head.Hash()
	} else {
		h, err := repo.ResolveRevision(plumbing.Revision(rev))
		if err != nil {
			return nil, refNotFound(op, fmt.Sprintf("%q: %v", rev, err))
		}
		hash = *h
	}
	commit, err := repo.CommitObject(hash)
	if err != nil {
		return nil, wrap(op, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, wrap(op, err)
	}
	if m.subdir == "" {
		return tree, nil
	}
	sub, err := tree.Tree(m.subdir)
	if err != nil {
		return nil, refNotFound(op, fmt.Sprintf("subdir %q: %v", m.subdir, err))
	}
	return sub, nil
}

// authMethod is the basic auth to send, or a nil interface without a token.
func (m *Mount) authMethod() transport.AuthMethod {
	if m.auth == nil {
		return nil
	}
	return m.auth
}
