package mount

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// Extended attributes the manager keeps in the workspace tree, so forks,
// checkpoints and restores carry them with the files.
const (
	// rootAttr, on a mount root directory, records the index (rootState).
	rootAttr = "trusted.forkspace.mount"
	// versionAttr, on a file from a lazy mount, is its upstream version.
	versionAttr = "trusted.forkspace.version"
)

// DefaultConcurrency bounds parallel fetches (Prefetch) and puts (Flush).
const DefaultConcurrency = 8

// Config configures a Manager.
type Config struct {
	// FS is the workspace's live filesystem; Attach installs the hooks.
	FS *vfs.FS
	// Meta persists pending write-back (a setting per workspace).
	Meta  meta.Store
	Table *Table
	// Context is given to factories; WorkspaceID also tells a fork (a
	// workspace reading an index another workspace made) from the owner.
	Context Context
	// OnConflict hears of every conflict; nil accepts.
	OnConflict ConflictHook
	// Concurrency bounds parallel fetches and puts (default
	// DefaultConcurrency).
	Concurrency int
	// Logger receives background write-back failures (default
	// slog.Default()).
	Logger *slog.Logger
}

// Manager runs one workspace's mount table: it indexes mounts on first use
// (all in parallel), hydrates stubs on first read, serves virtual mounts,
// enforces read-only mounts and writes changes under read-write mounts
// back to their sources.
//
// Concurrency: safe for concurrent use. Close it before closing the FS.
type Manager struct {
	cfg    Config
	log    *slog.Logger
	mounts []*mounted // sorted by root, like the table

	indexMu   sync.Mutex
	indexDone chan struct{} // closed when the first lazy index finished
	indexed   atomic.Bool   // set (under indexMu) once it has

	failMu sync.Mutex // orders updates of the failure records

	flights   flights
	pathLocks sync.Map // root NUL rel → *sync.Mutex (lockPath)

	wb writeBack
}

// mounted is one row of the table at run time.
type mounted struct {
	spec Spec
	path string // the FS path of the root ("data" for "/data")

	mu       sync.Mutex // guards m, strategy, failed, brought; held while building
	m        Mount
	strategy Strategy
	// failed is why the last index of an unindexed mount failed (nil once
	// one succeeds): operations under the root report it.
	failed error
	// brought is set when this Manager's index brought the mount in.
	brought bool
}

// rootState is the JSON value of rootAttr.
type rootState struct {
	Kind     string    `json:"kind"`
	Source   string    `json:"source,omitempty"`
	Owner    string    `json:"owner"` // the workspace that indexed it
	Indexed  time.Time `json:"indexed"`
	Entries  int64     `json:"entries"`
	Bytes    int64     `json:"bytes"`
	Strategy Strategy  `json:"strategy"`
}

var _ vfs.Hooks = (*Manager)(nil)

// Attach builds a Manager for cfg and installs it as cfg.FS's hooks. It
// resumes the pending write-back persisted by an earlier Manager of the
// same workspace (scheduled again; manual mounts wait for Flush). It does
// not index: the first operation that touches the FS does (Index).
func Attach(ctx context.Context, cfg Config) (*Manager, error) {
	if cfg.FS == nil || cfg.Meta == nil || cfg.Table == nil {
		return nil, fmt.Errorf("attach mounts: %w: FS, Meta and Table are required", fs.ErrInvalid)
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	m := &Manager{cfg: cfg, log: cfg.Logger}
	if m.log == nil {
		m.log = slog.Default()
	}
	m.log = m.log.With("component", "mount", "workspace", cfg.Context.WorkspaceID)
	for _, s := range cfg.Table.Specs() {
		m.mounts = append(m.mounts, &mounted{spec: s, path: s.Root[1:]})
	}
	m.wb.init(m)
	cfg.FS.SetHooks(m)
	if err := m.wb.load(ctx); err != nil {
		cfg.FS.SetHooks(nil)
		return nil, fmt.Errorf("attach mounts: %w", err)
	}
	return m, nil
}

// Close stops write-back timers and waits for write-backs in flight.
// Pending write-back stays persisted and resumes with the next Attach;
// call Flush first to push it now. The hooks stay installed (later
// mutations under read-write mounts are recorded as pending). Close is
// idempotent.
func (m *Manager) Close() error {
	m.wb.close()
	return nil
}

// match returns the mounted row whose root is the longest prefix of name.
func (m *Manager) match(name string) (*mounted, string, bool) {
	s, rel, ok := m.cfg.Table.Match(name)
	if !ok {
		return nil, "", false
	}
	for _, mt := range m.mounts {
		if mt.spec.Root == s.Root {
			return mt, rel, true
		}
	}
	return nil, "", false
}

// byRoot returns the row of root ("/data", cleaned like any edge path:
// "data/" and "./data" name it too); "" is every row.
func (m *Manager) byRoot(root string) ([]*mounted, error) {
	if root == "" {
		return m.mounts, nil
	}
	c, err := vfs.CleanPath(root)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w", root, err)
	}
	for _, mt := range m.mounts {
		if mt.path == c {
			return []*mounted{mt}, nil
		}
	}
	return nil, fmt.Errorf("mount %s: %w", root, fs.ErrNotExist)
}

// build returns mt's mount, calling the factory once.
func (m *Manager) build(ctx context.Context, mt *mounted) (Mount, Strategy, error) {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	if mt.m != nil {
		return mt.m, mt.strategy, nil
	}
	mc := m.cfg.Context
	mc.Root, mc.FS = mt.spec.Root, m.cfg.FS
	mnt, err := Build(context.WithValue(ctx, buildingKey{}, m), mt.spec, mc)
	if err != nil {
		return nil, "", err
	}
	st, err := StrategyOf(mnt)
	if err != nil {
		return nil, "", err
	}
	mt.m, mt.strategy = mnt, st
	return mnt, st, nil
}

// CheckWrite refuses mutations under read-only mounts
// (errdefs.ErrReadOnly) and of a mount root itself (errdefs.ErrReadOnly
// too: the mount point is not the workspace's to remove or replace), but
// for its attributes under a read-write mount (like any directory's, they
// stay in the workspace: write-back carries contents). Under a read-write
// mount it records the path's state before its first change, the
// precondition of its write-back.
func (m *Manager) CheckWrite(op, name string) error {
	mt, rel, ok := m.match(name)
	switch {
	case !ok:
		return nil
	case rel == "." && mt.spec.Options.Mode == ReadWrite && attrOps[op] && mt.indexFailure() == nil:
		return nil
	case rel == ".":
		return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: %s is a mount point", errdefs.ErrReadOnly, mt.spec.Root)}
	case mt.indexFailure() != nil:
		return &fs.PathError{Op: op, Path: name, Err: mt.indexFailure()}
	case mt.spec.Options.Mode == ReadOnly:
		return &fs.PathError{Op: op, Path: name, Err: errdefs.ErrReadOnly}
	case !m.cfg.Table.Ignored(name):
		m.wb.see(context.Background(), mt, rel)
	}
	return nil
}

// attrOps are the operations (vfs's names) that change only a path's
// attributes.
var attrOps = map[string]bool{
	"chmod": true, "chown": true, "lchown": true, "chtimes": true, "lchtimes": true,
	"setxattr": true, "removexattr": true,
}

// Changed records a mutation under a read-write mount for write-back.
func (m *Manager) Changed(name string) {
	mt, rel, ok := m.match(name)
	if !ok || rel == "." || mt.spec.Options.Mode != ReadWrite || m.cfg.Table.Ignored(name) {
		return
	}
	m.wb.mark(mt, rel)
}

// Virtual serves virtual mounts. It is the first hook every path
// operation calls, so an operation on a path under a mount root, or on a
// directory above one, starts the first index and waits for it; other
// paths need no index and do not wait.
//
// A factory runs inside that index, with a context marked by build: its
// own operations never wait for it (they would wait for themselves), and
// those under a mount root fail with errdefs.ErrBusy (building).
func (m *Manager) Virtual(ctx context.Context, name string) (vfs.Virtual, string, bool) {
	mt, rel, ok := m.match(name)
	switch {
	case ctx.Value(buildingKey{}) == m:
		if !ok {
			return nil, "", false
		}
		return building(mt.spec.Root), rel, true
	case !ok && !m.aboveRoot(name):
		return nil, "", false
	}
	m.awaitIndex(false)
	if !ok {
		return nil, "", false
	}
	mt.mu.Lock()
	v, isV := mt.m.(Virtual)
	failed := mt.failed
	mt.mu.Unlock()
	switch {
	case failed != nil:
		return failedMount{failed}, rel, true
	case !isV:
		return nil, "", false
	}
	return v, rel, true
}

// failedMount serves the paths under a mount whose index failed: every
// operation reports why, instead of "file does not exist".
type failedMount struct{ err error }

func (f failedMount) Stat(context.Context, string) (fs.FileInfo, error)      { return nil, f.err }
func (f failedMount) ReadDir(context.Context, string) ([]fs.DirEntry, error) { return nil, f.err }
func (f failedMount) ReadFile(context.Context, string) ([]byte, error)       { return nil, f.err }

// aboveRoot reports whether FS path name is a directory above a mount
// root ("." is above every root).
func (m *Manager) aboveRoot(name string) bool {
	for _, mt := range m.mounts {
		if name == "." || strings.HasPrefix(mt.path, name+"/") {
			return true
		}
	}
	return false
}

// buildingKey marks the context a factory is called with (build), so the
// hooks tell the factory's own operations from everyone else's.
type buildingKey struct{}

// building is what a factory sees under a mount root while mounts are
// being built: every read fails with errdefs.ErrBusy, naming the root.
type building string

func (b building) err() error {
	return fmt.Errorf("%w: mount %s is being indexed (a mount factory cannot use paths under mount roots)", errdefs.ErrBusy, string(b))
}

func (b building) Stat(context.Context, string) (fs.FileInfo, error)      { return nil, b.err() }
func (b building) ReadDir(context.Context, string) ([]fs.DirEntry, error) { return nil, b.err() }
func (b building) ReadFile(context.Context, string) ([]byte, error)       { return nil, b.err() }

// indexFailure returns why mt's index failed, or nil.
func (mt *mounted) indexFailure() error {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	return mt.failed
}

// awaitIndex runs the first index of every mount once per Manager and
// reports whether this call ran it, with its errors joined; retry (an
// explicit Index or Refresh) also indexes mounts in failure backoff. Errors are logged, and operations
// under the mount report them (failedMount). A mount whose index failed
// recently (failure records, backoff) is not listed again by every
// process that opens the workspace: Index and Refresh retry it now.
func (m *Manager) awaitIndex(retry bool) (ran bool, err error) {
	if m.indexed.Load() {
		return false, nil
	}
	m.indexMu.Lock()
	if m.indexed.Load() {
		m.indexMu.Unlock()
		return false, nil
	}
	if m.indexDone != nil {
		done := m.indexDone
		m.indexMu.Unlock()
		<-done
		return false, nil
	}
	done := make(chan struct{})
	m.indexDone = done
	m.indexMu.Unlock()
	ctx := context.Background()
	if err = m.each(m.mounts, func(mt *mounted) error { return m.firstIndex(ctx, mt, retry) }); err != nil {
		m.log.Warn("index mounts", "err", err)
	}
	m.indexMu.Lock()
	m.indexed.Store(true)
	m.indexMu.Unlock()
	close(done)
	return true, err
}

// Index indexes every mount not indexed yet (in this workspace's tree),
// all in parallel, and returns their errors joined; a mount whose index
// failed before is retried now. A mount whose index fails brings nothing
// in. Index is idempotent.
func (m *Manager) Index(ctx context.Context) error {
	if ran, err := m.awaitIndex(true); ran {
		return err // just tried: not again
	}
	return m.indexAll(ctx, false)
}

// pathErr names a mount root in an error.
func rootErr(op string, mt *mounted, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s mount %s: %w", op, mt.spec.Root, err)
}

// inMount reports whether FS path p is below the mount root at path root.
func inMount(root, p string) bool { return p == root || strings.HasPrefix(p, root+"/") }

// join returns the FS path of rel below mt.
func (mt *mounted) join(rel string) string {
	if rel == "." {
		return mt.path
	}
	return path.Join(mt.path, rel)
}

// isNotExist reports fs.ErrNotExist.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
