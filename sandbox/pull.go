package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/zeebo/blake3"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/vfs"
)

// Conflict is a path the command changed that the workspace also changed
// since it was materialized (a direct write while the command ran).
type Conflict struct {
	Path string
	// Op is the command's change: "created", "modified" or "deleted".
	Op string
}

// Resolution is a conflict hook's answer.
type Resolution int

const (
	// Accept applies the command's state (the default: it ran last).
	Accept Resolution = iota
	// KeepLocal keeps the workspace's state; the command's change is
	// reported in ExecResult.Dropped.
	KeepLocal
)

// ConflictFunc decides a conflict. It is called with the Exec's context,
// one path at a time, while the workspace's exec lock is held and during
// the pull-back's batch (vfs.FS.Batch): it must not write to the
// workspace, whose writers wait for the batch.
type ConflictFunc func(ctx context.Context, c Conflict) Resolution

// Dropped-change reasons.
const (
	reasonReadOnly  = "read-only path"
	reasonKeptLocal = "conflict: workspace change kept"
	reasonSpecial   = "unsupported file type"
)

// Reasons in ExecResult.Dropped of the changes of a refused pull-back
// (every change not dropped for a reason of its own gets one of these).
const (
	ReasonQuota    = "quota exceeded"
	ReasonDiskFull = "no space left on the store's disk"
	ReasonFailed   = "pull-back failed"
)

// puller applies the command's changes to the live workspace.
type puller struct {
	ctx      context.Context
	ws       *vfs.FS // the batch the changes go into (land)
	host     *os.Root
	man      manifest
	readOnly []string
	// policy says which paths lie under read-only mounts (nil: no mounts).
	policy  mount.Policy
	resolve ConflictFunc
	// pending collects paths whose host copy was left unlike the
	// workspace (with their subtrees); the next sync restores them.
	pending map[string]bool
}

// land applies changes to ws in one batch (vfs.FS.Batch): every change
// lands or none does. It returns what landed and what was dropped; when
// the batch fails (quota, disk full, any error) ws is exactly as before,
// changed is empty, dropped lists every change (those refused by policy
// with their own reason, the others with the failure's) and err says why.
// Either way the manifest no longer describes the work dir after a
// failure: the caller rematerializes it.
func (p *puller) land(ws *vfs.FS, changes []hostChange) (changed, dropped []provider.Change, err error) {
	err = ws.Batch(p.ctx, func(b *vfs.FS) error {
		p.ws = b
		var err error
		changed, dropped, err = p.pull(changes)
		return err
	})
	if err == nil {
		return changed, dropped, nil
	}
	refused := make(map[string]string, len(dropped))
	for _, d := range dropped {
		refused[d.Path] = d.Reason
	}
	reason := failReason(err)
	dropped = make([]provider.Change, 0, len(changes))
	for _, c := range changes {
		r := refused[c.path]
		if r == "" {
			r = reason
		}
		dropped = append(dropped, provider.Change{Path: c.path, Op: c.op, Reason: r})
	}
	return nil, dropped, err
}

// failReason is the Dropped reason of the changes of a refused pull-back.
func failReason(err error) string {
	switch {
	case errors.Is(err, errdefs.ErrQuota):
		return ReasonQuota
	case errors.Is(err, syscall.ENOSPC):
		return ReasonDiskFull
	}
	return ReasonFailed
}

// pull applies changes (deletions first, then the rest parents first) and
// returns what it changed and what it dropped.
func (p *puller) pull(changes []hostChange) (changed, dropped []provider.Change, err error) {
	slices.SortFunc(changes, func(a, b hostChange) int {
		if (a.op == opDeleted) != (b.op == opDeleted) {
			if a.op == opDeleted {
				return -1
			}
			return 1
		}
		return strings.Compare(a.path, b.path)
	})
	for _, c := range changes {
		if reason := p.drop(c); reason != "" {
			dropped = append(dropped, provider.Change{Path: c.path, Op: c.op, Reason: reason})
			p.leave(c.path)
			continue
		}
		if err := p.apply(c); err != nil {
			return changed, dropped, fmt.Errorf("pull %s: %w", c.path, err)
		}
		changed = append(changed, provider.Change{Path: c.path, Op: c.op})
	}
	return changed, dropped, nil
}

// leave forgets what the manifest knew of p, so the next sync rewrites it
// from the workspace.
func (p *puller) leave(path string) {
	p.man.drop(path)
	mark(p.pending, path, true)
}

// drop returns why c is not pulled ("" to pull it).
func (p *puller) drop(c hostChange) string {
	for _, ro := range p.readOnly {
		if under(c.path, ro) {
			return reasonReadOnly
		}
	}
	if p.policy != nil && p.policy.ReadOnly(c.path) {
		return reasonReadOnly
	}
	if p.conflicts(c) && p.resolve != nil && p.resolve(p.ctx, Conflict{Path: c.path, Op: c.op}) == KeepLocal {
		return reasonKeptLocal
	}
	return ""
}

// conflicts reports whether the workspace changed c.path since it was
// materialized.
func (p *puller) conflicts(c hostChange) bool {
	live, err := p.ws.Lstat(p.ctx, c.path)
	old := p.man[c.path]
	switch {
	case old == nil:
		return err == nil
	case err != nil:
		return c.op != opDeleted
	case old.kind == kindDir:
		return kindOf(live.Mode()) != kindDir
	}
	return !old.sameWorkspace(live)
}

// apply performs one change in the workspace and records the new state in
// the manifest.
func (p *puller) apply(c hostChange) error {
	if c.op == opDeleted {
		p.man.drop(c.path)
		if err := p.ws.RemoveAll(p.ctx, c.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	live, err := p.ws.Lstat(p.ctx, c.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	exists, k := err == nil, kindOf(c.st.mode)
	if old := p.man[c.path]; old != nil && old.kind == kindDir && k != kindDir {
		p.man.drop(c.path) // what the directory held is gone with it
	}
	if exists && kindOf(live.Mode()) != k {
		if err := p.ws.RemoveAll(p.ctx, c.path); err != nil {
			return err
		}
		exists = false
	}
	if !exists {
		if err := p.parent(c.path); err != nil {
			return err
		}
	}
	e := &entry{}
	perm := c.st.mode & permBits
	switch k {
	case kindDir:
		if !exists {
			if err := p.ws.Mkdir(p.ctx, c.path, perm); err != nil {
				return err
			}
		}
		if err := p.ws.Chmod(p.ctx, c.path, perm); err != nil {
			return err
		}
	case kindFile:
		if e.hash, err = p.copyFile(c.path, perm); err != nil {
			return err
		}
		if err := p.ws.Chmod(p.ctx, c.path, perm); err != nil {
			return err
		}
		if err := p.ws.Chtimes(p.ctx, c.path, time.Time{}, time.Unix(0, c.st.mtime)); err != nil {
			return err
		}
	case kindSymlink:
		if e.target, err = p.host.Readlink(c.path); err != nil {
			return err
		}
		if exists {
			if err := p.ws.Remove(p.ctx, c.path); err != nil {
				return err
			}
		}
		if err := p.ws.Symlink(p.ctx, e.target, c.path); err != nil {
			return err
		}
	}
	wfi, err := p.ws.Lstat(p.ctx, c.path)
	if err != nil {
		return err
	}
	// The host keeps the file the command wrote, with its stat as scanned
	// (a file changed again after the scan is re-read next time: its stat
	// no longer matches).
	e.setHost(c.st, time.Now())
	if k == kindFile && c.hashed && c.hash != e.hash {
		e.racy = true
	}
	e.setWorkspace(wfi)
	p.man[c.path] = e
	return nil
}

// parent creates the missing parent directories of name (the workspace
// removed them while the command ran; the command's state wins).
func (p *puller) parent(name string) error {
	dir := path.Dir(name)
	if dir == "." {
		return nil
	}
	if _, err := p.ws.Stat(p.ctx, dir); err == nil {
		return nil
	}
	return p.ws.MkdirAll(p.ctx, dir, 0o755)
}

// copyFile streams host file name into the workspace, replacing its
// contents, and returns its hash.
func (p *puller) copyFile(name string, perm fs.FileMode) (cas.Hash, error) {
	src, err := p.host.OpenFile(name, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return cas.Hash{}, err
	}
	defer src.Close()
	h := blake3.New()
	if _, err := p.ws.WriteFileFrom(p.ctx, name, io.TeeReader(src, h), perm); err != nil {
		return cas.Hash{}, err
	}
	var sum cas.Hash
	copy(sum[:], h.Sum(nil))
	return sum, nil
}
