package forkspace

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/blob/fileblob"
	"github.com/forkspace/forkspace/blob/packblob"
	"github.com/forkspace/forkspace/chunk"
	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/feed"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/vfs"
)

// FormatVersion is the on-disk format this code reads and writes.
const FormatVersion = 1

// Settings recorded in a store when it is created; they fix the format.
const (
	settingFormat    = "format"
	settingChunker   = "chunker"
	settingTreeSeed  = "tree_seed"
	settingInlineMax = "inline_max"
)

// Options configure Open. The zero value opens the embedded defaults: a
// store directory ($FORKSPACE_HOME, else ./.forkspace) holding an SQLite
// database (meta.db) and a local blob directory (blobs/).
type Options struct {
	// Dir is the store directory. Empty means $FORKSPACE_HOME, else
	// ./.forkspace. It is created if missing.
	Dir string
	// Meta and Blobs replace the embedded drivers (Dir is then used only
	// for the process lock, if set). The store closes them on Close.
	// PostgreSQL metadata: pgmeta.Open(ctx, "postgres://…",
	// pgmeta.Options{Exclusive: true}) (docs/decisions/018).
	Meta  meta.Store
	Blobs blob.Store
	// Packs configures packing small blobs on blob stores that want it
	// (S3: on by default; blobstore.go).
	Packs PackOptions
	// InlineMax is the largest file kept inline in metadata. It is fixed
	// when the store is created (default 16 KiB).
	InlineMax int
	// CacheBytes bounds each of the tree-node and file-content caches
	// (default 64 MiB).
	CacheBytes int64
	// FoldRows bounds a workspace's staging delta before it is folded into
	// its tree (default 4096).
	FoldRows int
	Logger   *slog.Logger
	// MountDrivers rebuild persisted mounts from their source URLs on
	// reopen (see mount.ParseURL); the CLI wires the built-in drivers.
	MountDrivers mount.Drivers
	// OnMountConflict hears of write-back conflicts (nil accepts).
	OnMountConflict mount.ConflictHook
	// Shared opens the store as one of several processes sharing it
	// (forkspace serve on several nodes; docs/decisions/023). Meta must be
	// a database several processes can open at once that notifies and
	// locks across them (meta.Listener and meta.Locker: pgmeta opened
	// with Shared), and Blobs a store every process reaches (S3), else
	// Open fails with fs.ErrInvalid. Commits then fence on each
	// workspace's head generation (vfs.Options.Shared), other processes'
	// changes reach this one's open workspaces and change feed by
	// notification, Workspace catches up with the database before it
	// returns an open workspace, and collections run one at a time
	// across the processes.
	Shared bool
	// OnDelete is called by Delete with the ID of the workspace it
	// deleted, once the deletion committed: the place to remove what a
	// workspace left outside the store, such as the sandbox's host work
	// dir (sandbox.RemoveWorkDir; this package cannot import it). Delete
	// returns its error; the workspace stays deleted.
	OnDelete func(ctx context.Context, id string) error
}

// DefaultDir returns the store directory used when Options.Dir is empty.
func DefaultDir() string {
	if d := os.Getenv("FORKSPACE_HOME"); d != "" {
		return d
	}
	return ".forkspace"
}

// Store is an open forkspace store: many workspaces, their forks and
// checkpoints, sharing one metadata database and one blob store. A store is
// opened by one process at a time (Open fails with errdefs.ErrBusy
// otherwise). All methods are safe for concurrent use.
type Store struct {
	meta    meta.Store
	blobs   blob.Store
	packs   *packblob.Store // blobs, when it packs (else nil)
	kv      *kv.Store
	content *content.Store
	log     *slog.Logger
	lock    *os.File
	opts    Options

	mu     sync.Mutex
	open   map[string]*Workspace // live workspaces by ID
	named  map[wsName]*Workspace // the same by tenant and name
	closed bool

	// roots is read-locked by operations that copy a tree root read in
	// one transaction into another (fork, checkpoint, restore), and locked
	// by the collector while it reads its roots, so no collection can
	// miss a root in transit.
	roots rootsLock
	// collecting serialises collections and checks.
	collecting sync.Mutex

	folder *checkpointFolder
	// sharing follows other processes' changes (Options.Shared; nil
	// otherwise).
	sharing *sharing

	tokensMu  sync.Mutex
	tokens    *auth.Tokens // tokens.go
	audit     *audit.Log   // the one log every recorder of this process uses
	feed      *feed.Feed
	uncovered *uncovered
}

// Open opens (creating if needed) the store described by opts.
func Open(ctx context.Context, opts Options) (_ *Store, err error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Store{log: log.With("component", "store"), opts: opts, open: make(map[string]*Workspace), named: make(map[wsName]*Workspace)}
	defer func() {
		if err != nil {
			s.release()
		}
	}()
	dir := opts.Dir
	if dir == "" && (opts.Meta == nil || opts.Blobs == nil) {
		dir = DefaultDir()
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		if s.lock, err = lockDir(dir); err != nil {
			return nil, err
		}
	}
	s.meta = opts.Meta
	if s.meta == nil {
		m, err := sqlitemeta.Open(ctx, filepath.Join(dir, "meta.db"), sqlitemeta.Options{Logger: log})
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", dir, err)
		}
		s.meta = m
	}
	s.blobs = opts.Blobs
	if s.blobs == nil {
		b, err := fileblob.Open(filepath.Join(dir, "blobs"))
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", dir, err)
		}
		s.blobs = b
	}
	if opts.Shared {
		if err := s.share(); err != nil {
			return nil, err
		}
	}
	set, err := s.settings(ctx, opts)
	if err != nil {
		return nil, err
	}
	if s.blobs, s.packs, err = packBlobs(s.meta, s.blobs, dir, opts.Packs); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s.kv = kv.New(s.meta, kv.Options{Seed: set.seed, CacheBytes: opts.CacheBytes})
	// New chunks wait for the disk together, once per metadata commit
	// (vfs syncs them before it), not each at its put
	// (docs/decisions/021).
	s.content = content.New(content.Options{
		Blobs: s.blobs, Meta: s.meta, Params: set.chunker,
		InlineMax: set.inlineMax, CacheBytes: opts.CacheBytes, Defer: true,
	})
	if err := s.recoverCollection(ctx); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s.audit = audit.NewLog(s.meta)
	if s.feed, err = feed.New(ctx, s.audit, feed.Options{Logger: log}); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s.startFolder()
	s.startUncovered()
	s.startSharing()
	return s, nil
}

// recoverCollection finishes or undoes a collection an earlier process
// left half done (gc.Recover), holding the right to collect: in a shared
// store another process may be collecting now.
func (s *Store) recoverCollection(ctx context.Context) error {
	unlock, err := s.collect(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return gc.Recover(ctx, s.gcDeps())
}

// lockDir takes an exclusive, non-blocking lock on dir/lock for the life of
// the process: the store keeps each workspace's staging delta in memory, so
// two processes must not write one store.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(f.Name())
		f.Close()
		return nil, fmt.Errorf("open store %s: %w: in use by another process (pid %s)", dir, errdefs.ErrBusy, string(holder))
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())), 0)
	return f, nil
}

type storeSettings struct {
	chunker   chunk.Params
	seed      uint64
	inlineMax int
}

// settings reads the format settings, recording them on first open.
func (s *Store) settings(ctx context.Context, opts Options) (storeSettings, error) {
	var set storeSettings
	err := s.meta.Update(ctx, func(tx meta.Tx) error {
		format, err := tx.Setting(settingFormat)
		if errors.Is(err, fs.ErrNotExist) {
			if err := checkBlobStore(tx, opts); err != nil {
				return err
			}
			return initSettings(tx, opts, &set)
		}
		if err != nil {
			return err
		}
		if format != strconv.Itoa(FormatVersion) {
			return fmt.Errorf("%w: store format %s, this build reads format %d", errdefs.ErrCorrupt, format, FormatVersion)
		}
		if err := checkBlobStore(tx, opts); err != nil {
			return err
		}
		return readSettings(tx, &set)
	})
	if err != nil {
		return set, fmt.Errorf("open store: read settings: %w", err)
	}
	return set, nil
}

func initSettings(tx meta.Tx, opts Options, set *storeSettings) error {
	set.chunker = chunk.DefaultParams
	set.inlineMax = opts.InlineMax
	if set.inlineMax == 0 {
		set.inlineMax = 16 << 10
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	set.seed = binary.LittleEndian.Uint64(b[:])
	params, err := json.Marshal(set.chunker)
	if err != nil {
		return err
	}
	for k, v := range map[string]string{
		settingFormat:    strconv.Itoa(FormatVersion),
		settingChunker:   string(params),
		settingTreeSeed:  strconv.FormatUint(set.seed, 10),
		settingInlineMax: strconv.Itoa(set.inlineMax),
	} {
		if err := tx.SetSetting(k, v); err != nil {
			return err
		}
	}
	return nil
}

func readSettings(tx meta.Tx, set *storeSettings) error {
	get := func(key string) (string, error) {
		v, err := tx.Setting(key)
		if err != nil {
			return "", fmt.Errorf("%w: setting %s: %w", errdefs.ErrCorrupt, key, err)
		}
		return v, nil
	}
	v, err := get(settingChunker)
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(v), &set.chunker); err != nil {
		return fmt.Errorf("%w: setting %s: %w", errdefs.ErrCorrupt, settingChunker, err)
	}
	if v, err = get(settingTreeSeed); err != nil {
		return err
	}
	if set.seed, err = strconv.ParseUint(v, 10, 64); err != nil {
		return fmt.Errorf("%w: setting %s: %w", errdefs.ErrCorrupt, settingTreeSeed, err)
	}
	if v, err = get(settingInlineMax); err != nil {
		return err
	}
	if set.inlineMax, err = strconv.Atoi(v); err != nil {
		return fmt.Errorf("%w: setting %s: %w", errdefs.ErrCorrupt, settingInlineMax, err)
	}
	return nil
}

func (s *Store) deps() vfs.Deps {
	return vfs.Deps{Meta: s.meta, KV: s.kv, Content: s.content, Logger: s.log}
}

// Close closes every open workspace and the store's drivers. Data whose
// write returned is already durable. Close is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	open := s.open
	s.open, s.named = nil, nil
	s.mu.Unlock()
	s.folder.stop()
	s.stopSharing()
	var errs []error
	for _, w := range open {
		errs = append(errs, w.close())
	}
	s.uncovered.close()
	errs = append(errs, s.release())
	return errors.Join(errs...)
}

// Settle writes back now the debounced mount changes of every open
// workspace (what their timers would write later), for a process about to
// exit; Close alone leaves them pending for the next open. Conflicted
// paths stay pending.
func (s *Store) Settle(ctx context.Context) error {
	s.mu.Lock()
	open := slices.Collect(maps.Values(s.open))
	s.mu.Unlock()
	var errs []error
	for _, w := range open {
		errs = append(errs, w.settle(ctx))
	}
	return errors.Join(errs...)
}

// release closes the drivers and the lock.
func (s *Store) release() error {
	var errs []error
	if s.meta != nil {
		errs = append(errs, s.meta.Close())
	}
	if s.blobs != nil {
		errs = append(errs, s.blobs.Close())
	}
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
	}
	return errors.Join(errs...)
}
