package sqlitemeta

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/internal/sqltx"
)

// Options configure a Store. The zero value means defaults.
type Options struct {
	// BusyTimeout is how long a statement waits for a lock held by another
	// process before failing with errdefs.ErrBusy (default 5 s).
	BusyTimeout time.Duration
	// Logger receives migration notices and background failures (default
	// slog.Default()).
	Logger *slog.Logger
}

// Store is a meta.Store over one SQLite database file.
type Store struct {
	path   string
	log    *slog.Logger
	write  *sql.DB // one connection, owned by w
	read   *sql.DB // a pool of query_only connections
	reads  *sqltx.StmtCache
	points *pointReader // GetNode, GetInline
	w      *writer
	ck     *checkpointer

	mu      sync.RWMutex   // write-locked by Close to stop new calls
	closed  bool           // guarded by mu
	reading sync.WaitGroup // Views and point reads in flight
}

var _ meta.Store = (*Store)(nil)

// pageSize is the page size of new databases.
const pageSize = 8192

// mmapBytes is how much of the file each connection maps.
const mmapBytes = 1 << 30

// walSizeLimit is the size, in bytes, to which SQLite truncates the WAL
// file when it restarts it after a complete checkpoint.
const walSizeLimit = walBackstopPages * pageSize

// cacheKiB is each connection's page cache size (PRAGMA cache_size, in
// KiB); pages read through the memory map cost the cache little.
const cacheKiB = 8 << 10

// Open opens or creates the database at path and brings its schema up to
// date. A file that is not a SQLite database, or is truncated (see
// checkHeader), is errdefs.ErrCorrupt; a schema newer than this build is
// errors.ErrUnsupported. Open reads the file's header and schema only, so
// its cost does not grow with the database: damage inside the file's pages
// is found by CheckIntegrity (fsck), or as errdefs.ErrCorrupt by the read
// that meets it.
func Open(ctx context.Context, path string, opts Options) (_ *Store, err error) {
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open metadata %s: %w", path, err)
	}
	s := &Store{path: abs, log: opts.Logger.With("component", "sqlitemeta", "path", abs)}
	var conn *sql.Conn
	defer func() {
		if err != nil {
			if s.w != nil {
				s.w.stmts.Close()
			}
			if s.ck != nil {
				s.ck.conn.Close()
			}
			if conn != nil {
				conn.Close()
			}
			s.closeDBs()
			err = fmt.Errorf("open metadata %s: %w", path, err)
		}
	}()

	if err := checkHeader(abs); err != nil {
		return nil, err
	}
	s.write = sql.OpenDB(connector{dsn: dsn(abs, opts.BusyTimeout, false)})
	s.write.SetMaxOpenConns(2) // the writer's and the checkpointer's
	if conn, err = s.write.Conn(ctx); err != nil {
		return nil, translate(err)
	}
	ms, err := migrations()
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, conn, ms, s.log); err != nil {
		return nil, err
	}
	if err := enableWAL(ctx, conn); err != nil {
		return nil, err
	}
	ckConn, err := s.write.Conn(ctx)
	if err != nil {
		return nil, translate(err)
	}
	s.ck = newCheckpointer(ckConn, s.log)
	s.w = newWriter(conn, s.ck, s.log)

	readers, points := max(4, runtime.GOMAXPROCS(0)), max(2, runtime.GOMAXPROCS(0))
	s.read = sql.OpenDB(connector{dsn: dsn(abs, opts.BusyTimeout, true)})
	s.read.SetMaxOpenConns(readers + points)
	s.read.SetMaxIdleConns(readers + points)
	s.reads = sqltx.NewStmtCache(s.read.PrepareContext)
	if s.points, err = newPointReader(ctx, s.read, points); err != nil {
		return nil, translate(err)
	}
	go s.w.run()
	go s.ck.run()
	return s, nil
}

// enableWAL switches the database to WAL mode, which persists in the file.
// It runs after the first migration because SQLite ignores page_size when
// an empty database is switched to WAL first.
func enableWAL(ctx context.Context, conn *sql.Conn) error {
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		return fmt.Errorf("enable WAL: %w", translate(err))
	}
	if mode != "wal" {
		return fmt.Errorf("enable WAL: journal mode is %q", mode)
	}
	return nil
}

// dsn builds the connection string. WAL (see enableWAL) lets readers run
// beside the writer; synchronous=NORMAL in WAL mode makes a committed
// transaction survive the death of the process (it is in the WAL file, in
// the OS page cache, before COMMIT returns) but not a power loss or kernel
// crash, which can lose the last transactions before the next checkpoint
// (never corrupting the file).
func dsn(path string, busy time.Duration, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	if !readOnly {
		// page_size only takes effect on a new database; 8 KiB keeps a
		// typical tree node (a few KiB) on one page instead of an overflow
		// chain, which SQLite reads with a system call each time.
		q.Add("_pragma", fmt.Sprintf("page_size(%d)", pageSize))
	}
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walBackstopPages))
	q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", walSizeLimit))
	q.Add("_pragma", "foreign_keys(ON)")
	q.Add("_pragma", fmt.Sprintf("cache_size(-%d)", cacheKiB))
	q.Add("_pragma", "temp_store(MEMORY)")
	// Reads of pages outside the WAL go through a memory map instead of a
	// pread(2) each (a point read of a cold node: ~15 → ~10 µs). As with
	// any mmap, an I/O error on the file then surfaces as SIGBUS.
	q.Add("_pragma", fmt.Sprintf("mmap_size(%d)", mmapBytes))
	if readOnly {
		q.Add("_pragma", "query_only(ON)")
	}
	u := url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}
	return u.String()
}

// View implements meta.Store: fn runs in a read transaction on a pooled
// connection. The snapshot is fixed by the first statement fn runs; an
// Update may commit meanwhile without View seeing it. Writes through the Tx
// fail with errdefs.ErrReadOnly.
func (s *Store) View(ctx context.Context, fn func(meta.Tx) error) error {
	if err := s.startRead("view"); err != nil {
		return err
	}
	defer s.reading.Done()
	sqlTx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("begin view: %w", translate(err))
	}
	defer sqlTx.Rollback()
	t := sqltx.New(ctx, s.reads.Bind(sqlTx), translate, true)
	defer t.Finish()
	return fn(t)
}

// Update implements meta.Store with group commit (see writer): concurrent
// calls share one SQLite transaction, each fn in its own savepoint. Update
// returns after the shared COMMIT; if COMMIT fails every fn of the batch
// gets that error. When ctx is done before fn starts, fn does not run and
// Update returns ctx's error; once fn runs it is not interrupted. A panic in
// fn rolls fn back and is re-raised in the caller's goroutine. fn must not
// call Update itself (it would wait for its own batch).
func (s *Store) Update(ctx context.Context, fn func(meta.Tx) error) error {
	req := &request{ctx: ctx, fn: fn, done: make(chan outcome, 1)}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return s.errClosed("update")
	}
	select {
	case s.w.queue <- req:
	case <-ctx.Done():
		s.mu.RUnlock()
		return fmt.Errorf("update: %w", ctx.Err())
	}
	s.mu.RUnlock()
	o := <-req.done
	if o.panicked {
		panic(o.panicValue)
	}
	return o.err
}

// Stats counts the work of a Store since Open.
type Stats struct {
	// Commits is the number of write transactions committed.
	Commits int64
	// Updates is the number of Update functions those transactions
	// carried; Updates/Commits is the mean group-commit batch size.
	Updates int64
}

// Stats returns the store's counters. It is safe to call at any time.
func (s *Store) Stats() Stats {
	return Stats{Commits: s.w.commits.Load(), Updates: s.w.updates.Load()}
}

// GetNode implements meta.Store with a prepared point read on a dedicated
// read connection (see pointReader).
func (s *Store) GetNode(ctx context.Context, h cas.Hash) ([]byte, error) {
	return s.getObject(ctx, "get node", sqltx.QGetNode, h)
}

// GetNodes implements kv.BatchSource: one query for up to 64 nodes, on
// the point-read connections.
func (s *Store) GetNodes(ctx context.Context, hs []cas.Hash, fn func(cas.Hash, []byte) error) error {
	return s.getObjects(ctx, "get nodes", qGetNodes, hs, false, func(h cas.Hash, data []byte, _ bool) error { return fn(h, data) })
}

// GetInlines implements meta.Store: one query for up to 64 bodies, on the
// point-read connections.
func (s *Store) GetInlines(ctx context.Context, hs []cas.Hash, fn func(cas.Hash, []byte) error) error {
	return s.getObjects(ctx, "get inline bodies", qGetInlines, hs, false, func(h cas.Hash, data []byte, _ bool) error { return fn(h, data) })
}

// GetCheckedInlines implements meta.CheckedInlines: GetInlines, each body
// checked against its stored CRC-32C (sqltx.InlineChecked).
func (s *Store) GetCheckedInlines(ctx context.Context, hs []cas.Hash, fn func(cas.Hash, []byte, bool) error) error {
	return s.getObjects(ctx, "get inline bodies", qGetInlines, hs, true, fn)
}

// getObjects reads the objects of hs with query (one of batchArgs hashes)
// in batches and calls fn for each one found; with check, checked reports
// that the object matched the checksum query selects beside it.
func (s *Store) getObjects(ctx context.Context, op, query string, hs []cas.Hash, check bool, fn func(h cas.Hash, data []byte, checked bool) error) error {
	if err := s.startRead(op); err != nil {
		return err
	}
	defer s.reading.Done()
	keys := make([][]byte, 0, batchArgs)
	for len(hs) > 0 {
		n := min(len(hs), batchArgs)
		keys = keys[:0]
		for i := range hs[:n] {
			keys = append(keys, hs[i][:])
		}
		err := s.points.getMany(ctx, query, keys, func(k, data []byte, crc int64, stored bool) error {
			h, err := cas.FromBytes(k)
			if err != nil {
				return err
			}
			return fn(h, data, check && sqltx.InlineChecked(data, crc, stored))
		})
		if err != nil {
			return fmt.Errorf("%s: %w", op, translate(err))
		}
		hs = hs[n:]
	}
	return nil
}

// qGetNodes and qGetInlines select the objects of batchArgs hashes, with
// the checksum of each inline body.
var (
	qGetNodes   = `SELECT hash, data, NULL FROM nodes WHERE hash IN (` + batchParams + `)`
	qGetInlines = `SELECT hash, data, crc FROM inline_bodies WHERE hash IN (` + batchParams + `)`
)

// batchParams is the parameter list of batchArgs arguments.
var batchParams = `?` + strings.Repeat(`, ?`, batchArgs-1)

// GetInline implements meta.Store.
func (s *Store) GetInline(ctx context.Context, h cas.Hash) ([]byte, error) {
	return s.getObject(ctx, "get inline body", sqltx.QGetInline, h)
}

func (s *Store) getObject(ctx context.Context, op, query string, h cas.Hash) ([]byte, error) {
	if err := s.startRead(op); err != nil {
		return nil, err
	}
	defer s.reading.Done()
	data, err := s.points.get(ctx, query, h[:])
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", op, h.Short(), translate(err))
	}
	return data, nil
}

// startRead registers a read with Close, which waits for it; the caller
// calls s.reading.Done when finished. A closed store is fs.ErrClosed.
func (s *Store) startRead(op string) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return s.errClosed(op)
	}
	s.reading.Add(1)
	return nil
}

// Close waits for queued Updates and for reads in flight to finish, then
// closes the database. Calls after Close, Close included, fail with
// fs.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return s.errClosed("close")
	}
	s.closed = true
	close(s.w.queue)
	s.mu.Unlock()
	<-s.w.stopped
	s.reading.Wait()
	s.w.stmts.Close()
	err := errors.Join(s.ck.close(), s.w.conn.Close())
	return errors.Join(err, s.closeDBs())
}

// closeDBs closes whichever pools are open.
func (s *Store) closeDBs() error {
	var errs []error
	if s.points != nil {
		errs = append(errs, s.points.close())
	}
	if s.reads != nil {
		s.reads.Close()
	}
	for _, db := range []*sql.DB{s.read, s.write} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close metadata %s: %w", s.path, err)
	}
	return nil
}

func (s *Store) errClosed(op string) error {
	return fmt.Errorf("%s: metadata %s: %w", op, s.path, fs.ErrClosed)
}
