package fileblob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
)

var (
	_ blob.Store    = (*Store)(nil)
	_ blob.Deferred = (*Store)(nil)
)

// StaleTemp is the age past which Open deletes a temp file as abandoned.
const StaleTemp = time.Minute

const tmpDir = "tmp"

// Store is a blob.Store over a local directory. It is safe for concurrent
// use, also by several processes sharing the directory.
type Store struct {
	dir    string
	closed atomic.Bool
	// dirs caches leaf directories known to exist (key: "ab/cd").
	dirs sync.Map

	// unsynced are the files PutDeferred stored since the last Sync took
	// them; syncing serializes Syncs, so that a Sync returns only after
	// the files an earlier, still running Sync took are durable too.
	// unsyncedDirs are directories whose new entries (leaf or shard
	// directories PutDeferred created) the next Sync makes durable.
	mu           sync.Mutex
	unsynced     []string
	unsyncedDirs []string
	syncing      sync.Mutex

	// frees are empty files in tmp this Store made of deleted blobs, for
	// its next puts to reuse (at most maxFree).
	freeMu sync.Mutex
	frees  []string
}

// maxFree bounds the deleted blob files a Store keeps for reuse.
const maxFree = 4096

// free removes the blob file at p from its name by moving it into tmp as
// an empty file that a later put writes again, instead of unlinking it:
// on ext4 without a journal every new inode's allocation skips the
// inodes deleted in the last minutes one by one, so a store that deletes
// blobs and writes new ones paid for each in its next creations
// (docs/decisions/033). Past maxFree files it unlinks.
func (s *Store) free(p string) error {
	s.freeMu.Lock()
	full := len(s.frees) >= maxFree
	s.freeMu.Unlock()
	if full {
		return os.Remove(p)
	}
	name := filepath.Join(s.dir, tmpDir, fmt.Sprintf("free-%016x", rand.Uint64()))
	if err := os.Rename(p, name); err != nil {
		return err
	}
	if err := os.Truncate(name, 0); err != nil {
		// Gone (another process's Open removed it as stale) or not
		// truncatable: not worth keeping.
		_ = os.Remove(name)
		return nil
	}
	s.freeMu.Lock()
	s.frees = append(s.frees, name)
	s.freeMu.Unlock()
	return nil
}

// reuseFree opens one of the store's free files for writing, or returns
// nil when it has none left.
func (s *Store) reuseFree() *os.File {
	for {
		s.freeMu.Lock()
		n := len(s.frees)
		if n == 0 {
			s.freeMu.Unlock()
			return nil
		}
		name := s.frees[n-1]
		s.frees = s.frees[:n-1]
		s.freeMu.Unlock()
		if f, err := os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0); err == nil {
			return f
		}
	}
}

// Open returns a Store over dir, creating dir if needed, and removes stale
// temp files left by crashed writers.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(filepath.Join(dir, tmpDir), 0o700); err != nil {
		return nil, fmt.Errorf("open blob store: %w", err)
	}
	if err := removeStale(filepath.Join(dir, tmpDir), time.Now().Add(-StaleTemp)); err != nil {
		return nil, fmt.Errorf("open blob store: %w", err)
	}
	return &Store{dir: dir}, nil
}

func removeStale(tmp string, before time.Time) error {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return err
	}
	for _, e := range entries {
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if info.ModTime().Before(before) {
			if err := os.Remove(filepath.Join(tmp, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// Path returns the file that holds blob id (which may not exist).
func (s *Store) Path(id cas.Hash) string {
	h := id.String()
	return filepath.Join(s.dir, h[0:2], h[2:4], h)
}

func (s *Store) check(ctx context.Context, op string, id cas.Hash) error {
	if s.closed.Load() {
		return fmt.Errorf("%s blob %s: %w", op, id, fs.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s blob %s: %w", op, id, err)
	}
	return nil
}

// Put stores data under id durably (see the package documentation).
func (s *Store) Put(ctx context.Context, id cas.Hash, data []byte) error {
	return s.put(ctx, id, data, true)
}

// PutDeferred stores data under id without waiting for the disk: the file
// is written, its writeback started, and renamed into place, and it joins
// the files the next Sync makes durable.
func (s *Store) PutDeferred(ctx context.Context, id cas.Hash, data []byte) error {
	return s.put(ctx, id, data, false)
}

func (s *Store) put(ctx context.Context, id cas.Hash, data []byte, durable bool) error {
	if err := s.check(ctx, "put", id); err != nil {
		return err
	}
	final := s.Path(id)
	if info, err := os.Stat(final); err == nil && info.Size() == int64(len(data)) {
		// Another writer may have renamed it into place without having
		// synced it yet: sync it (or have Sync do so) before promising
		// durability.
		if !durable {
			s.addUnsynced(final)
			return nil
		}
		err := syncFile(final)
		if err == nil {
			err = syncDir(filepath.Dir(final))
		}
		if !errors.Is(err, fs.ErrNotExist) {
			if err != nil {
				return fmt.Errorf("put blob %s: %w", id, err)
			}
			return nil
		}
		// A Delete took it meanwhile: write it again.
	}
	if err := s.ensureDir(id, durable); err != nil {
		return fmt.Errorf("put blob %s: %w", id, err)
	}
	if err := s.writeTemp(final, id, data, durable); err != nil {
		return fmt.Errorf("put blob %s: %w", id, err)
	}
	return nil
}

func (s *Store) writeTemp(final string, id cas.Hash, data []byte, durable bool) error {
	f := s.reuseFree()
	if f == nil {
		var err error
		if f, err = os.CreateTemp(filepath.Join(s.dir, tmpDir), id.String()+"-*"); err != nil {
			return err
		}
	}
	tmp := f.Name()
	err := writePieces(f, data)
	if err == nil {
		if durable {
			err = f.Sync()
		} else {
			startWriteback(f)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.renameIn(tmp, final, id, durable)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if !durable {
		s.addUnsynced(final)
		return nil
	}
	if err := syncDir(filepath.Dir(final)); err != nil {
		return err
	}
	// The leaf directory may be one a deferred put created: its entry
	// must be durable too.
	return s.Sync(context.Background())
}

// writePiece is the most writePieces hands write(2) at once.
const writePiece = 256 << 10

// writePieces writes data to f in writes of at most writePiece bytes. On
// the Linux VM the benchmarks run on, a blob written in one 4 MiB write
// and then started on its way to disk cost 2–5 times the CPU of 256 KiB
// writes (0.8–2.8 s/GiB against 0.4–0.5 with the fsyncs, most of it
// inside write(2)) at a fraction of the throughput; the likely cause is
// the page cache taking larger pieces of memory for a larger write.
func writePieces(f *os.File, data []byte) error {
	for len(data) > 0 {
		n := min(len(data), writePiece)
		if _, err := f.Write(data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// addUnsynced adds a blob file to those the next Sync makes durable.
func (s *Store) addUnsynced(path string) {
	s.mu.Lock()
	s.unsynced = append(s.unsynced, path)
	s.mu.Unlock()
}

// syncWorkers is how many files Sync fsyncs at once: the disk serves
// concurrent flushes together.
const syncWorkers = 8

// Sync makes every blob PutDeferred stored before the call durable: each
// file, then each leaf directory holding one, is fsynced. A file deleted
// meanwhile (garbage collection) is skipped. After a failure the files
// stay in the set, for the next Sync to retry.
func (s *Store) Sync(ctx context.Context) error {
	if s.closed.Load() {
		return fmt.Errorf("sync blobs: %w", fs.ErrClosed)
	}
	s.syncing.Lock()
	defer s.syncing.Unlock()
	s.mu.Lock()
	files, created := s.unsynced, s.unsyncedDirs
	s.unsynced, s.unsyncedDirs = nil, nil
	s.mu.Unlock()
	if len(files)+len(created) == 0 {
		return nil
	}
	dirs := map[string]struct{}{}
	for _, f := range files {
		dirs[filepath.Dir(f)] = struct{}{}
	}
	for _, d := range created {
		dirs[d] = struct{}{}
	}
	err := syncAll(ctx, files, syncFile)
	if err == nil {
		err = syncAll(ctx, slices.Collect(maps.Keys(dirs)), syncDir)
	}
	if err != nil {
		s.mu.Lock()
		s.unsynced = append(s.unsynced, files...)
		s.unsyncedDirs = append(s.unsyncedDirs, created...)
		s.mu.Unlock()
		return fmt.Errorf("sync blobs: %w", err)
	}
	return nil
}

// syncAll runs sync on every path with syncWorkers goroutines; a path
// that no longer exists is skipped.
func syncAll(ctx context.Context, paths []string, sync func(string) error) error {
	next := make(chan string)
	errs := make(chan error, syncWorkers)
	for range syncWorkers {
		go func() {
			var first error
			for p := range next {
				if err := sync(p); err != nil && first == nil && !errors.Is(err, fs.ErrNotExist) {
					first = err
				}
			}
			errs <- first
		}()
	}
	var err error
	for _, p := range paths {
		if err = ctx.Err(); err != nil {
			break
		}
		next <- p
	}
	close(next)
	for range syncWorkers {
		err = errors.Join(err, <-errs)
	}
	return err
}

// renameIn renames tmp to final, the file of id, creating its directories
// again when a Delete removed them meanwhile (they were empty).
func (s *Store) renameIn(tmp, final string, id cas.Hash, durable bool) error {
	for range maxRetries {
		err := os.Rename(tmp, final)
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if _, serr := os.Stat(tmp); serr != nil {
			return err // the temp file is gone, not the directory
		}
		s.dirs.Delete(leafOf(id))
		if err := s.ensureDir(id, durable); err != nil {
			return err
		}
	}
	return errDirGone
}

// errDirGone is the error of a Put whose directory a Delete kept removing.
var errDirGone = fmt.Errorf("%w: the blob's directory kept disappearing", errdefs.ErrBusy)

// maxRetries bounds renameIn's attempts; each needs a Delete emptying the
// directory between ensureDir and the rename, so two are rare.
const maxRetries = 100

// leafOf is the key of id's leaf directory in s.dirs ("ab/cd").
func leafOf(id cas.Hash) string {
	h := id.String()
	return h[0:2] + "/" + h[2:4]
}

// ensureDir creates the leaf directory of id; see mkdirs for durable.
func (s *Store) ensureDir(id cas.Hash, durable bool) error {
	h := id.String()
	leaf := leafOf(id)
	if _, ok := s.dirs.Load(leaf); ok {
		return nil
	}
	for range maxRetries {
		err := s.mkdirs(durable, h[0:2], filepath.Join(h[0:2], h[2:4]))
		if errors.Is(err, fs.ErrNotExist) {
			continue // a Delete removed the shard between the two
		}
		if err == nil {
			s.dirs.Store(leaf, struct{}{})
		}
		return err
	}
	return errDirGone
}

// mkdirs creates each directory that is missing, in order, and makes its
// entry durable: at once when durable, else at the next Sync.
func (s *Store) mkdirs(durable bool, dirs ...string) error {
	for _, d := range dirs {
		err := os.Mkdir(filepath.Join(s.dir, d), 0o700)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		parent := filepath.Dir(filepath.Join(s.dir, d))
		if !durable {
			s.mu.Lock()
			s.unsyncedDirs = append(s.unsyncedDirs, parent)
			s.mu.Unlock()
			continue
		}
		if err := syncDir(parent); err != nil {
			return err
		}
	}
	return nil
}

// syncFile fsyncs the file at path.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Get reads the requested range with ReadAt (see blob.Store.Get) and
// verifies whole-blob reads.
func (s *Store) Get(ctx context.Context, id cas.Hash, off, length int64) ([]byte, error) {
	if err := s.check(ctx, "get", id); err != nil {
		return nil, err
	}
	f, err := os.Open(s.Path(id))
	if err != nil {
		return nil, fmt.Errorf("get blob %s: %w", id, hidePath(err))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("get blob %s: %w", id, err)
	}
	size := info.Size()
	if off < 0 || off > size {
		return nil, fmt.Errorf("get blob %s: %w: offset %d outside size %d", id, fs.ErrInvalid, off, size)
	}
	end := size
	if length >= 0 {
		end = min(size, off+length)
	}
	buf := make([]byte, end-off)
	if n, err := f.ReadAt(buf, off); n < len(buf) {
		if errors.Is(err, io.EOF) {
			err = errdefs.ErrCorrupt
		}
		return nil, fmt.Errorf("get blob %s: read %d of %d bytes: %w", id, n, len(buf), err)
	}
	if off == 0 && end == size && !cas.Verify(id, buf) {
		return nil, fmt.Errorf("get blob %s: %w", id, errdefs.ErrCorrupt)
	}
	return buf, nil
}

// hidePath drops the host path from a missing blob's error: callers name
// blobs by address, and a message may reach a tenant.
func hidePath(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fs.ErrNotExist
	}
	return err
}

// Stat returns the blob's size and file modification time.
func (s *Store) Stat(ctx context.Context, id cas.Hash) (blob.Info, error) {
	if err := s.check(ctx, "stat", id); err != nil {
		return blob.Info{}, err
	}
	info, err := os.Stat(s.Path(id))
	if err != nil {
		return blob.Info{}, fmt.Errorf("stat blob %s: %w", id, hidePath(err))
	}
	return blob.Info{ID: id, Size: info.Size(), ModTime: info.ModTime()}, nil
}

// Delete removes the blob's file from its name (keeping the emptied file
// in tmp for a later put to reuse, see free), then its leaf and shard
// directories if that left them empty; a missing blob is not an error.
func (s *Store) Delete(ctx context.Context, id cas.Hash) error {
	if err := s.check(ctx, "delete", id); err != nil {
		return err
	}
	p := s.Path(id)
	if err := s.free(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete blob %s: %w", id, err)
	}
	s.dirs.Delete(leafOf(id))
	for _, d := range []string{filepath.Dir(p), filepath.Dir(filepath.Dir(p))} {
		// rmdir removes only an empty directory: one that still holds a
		// blob (or gained one) stays, and a Put racing with it creates
		// the directory again (renameIn).
		if err := os.Remove(d); err != nil {
			break
		}
	}
	return nil
}

// Close marks the store closed. Later calls, Close included, fail with
// fs.ErrClosed; calls already running finish.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return fmt.Errorf("close blob store %s: %w", s.dir, fs.ErrClosed)
	}
	return nil
}
