package pgmeta

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"sync"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/internal/sqltx"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// Options configure a Store. The zero value means defaults.
type Options struct {
	// MaxConns bounds the connection pool (default: pgxpool's, the larger
	// of 4 and the number of CPUs).
	MaxConns int32
	// Logger receives migration notices (default slog.Default()).
	Logger *slog.Logger
	// Exclusive makes the Store the database's only exclusive user while
	// it is open: Open takes a session advisory lock on a connection of
	// its own and fails with errdefs.ErrBusy if another process (or Store)
	// holds it. A forkspace store opened by one process sets it
	// (decision 004 for PostgreSQL).
	Exclusive bool
	// Shared makes the Store one of several processes sharing the
	// database (forkspace serve on several nodes, docs/decisions/023):
	// Open takes the same lock in shared mode, so shared and exclusive
	// users exclude each other (errdefs.ErrBusy) while any number of
	// shared ones open at once. Exclusive and Shared together are
	// fs.ErrInvalid.
	Shared bool
}

// Store is a meta.Store over one PostgreSQL database.
type Store struct {
	name  string // the URL without secrets, for messages
	log   *slog.Logger
	pool  *pgxpool.Pool
	db    *sql.DB   // database/sql over pool, for the shared queries
	owner *pgx.Conn // holds the owner lock (Options.Exclusive or Shared)

	mu     sync.RWMutex   // write-locked by Close to stop new calls
	closed bool           // guarded by mu
	calls  sync.WaitGroup // calls in flight
}

var _ meta.Store = (*Store)(nil)

// Open connects to the PostgreSQL database rawURL names
// (postgres://[user@]host[:port]/dbname?…, or a unix socket directory as
// host=/path) and brings its schema up to date. Secrets come from the
// environment as libpq takes them (PGPASSWORD, PGPASSFILE or ~/.pgpass,
// PGSSLKEY…): a URL holding a password is refused with fs.ErrInvalid so
// that none is written into shell history, process lists or
// configuration. A schema newer than this build is errors.ErrUnsupported.
func Open(ctx context.Context, rawURL string, opts Options) (_ *Store, err error) {
	name, err := checkURL(rawURL)
	if err != nil {
		return nil, err
	}
	if opts.Exclusive && opts.Shared {
		return nil, fmt.Errorf("open metadata %s: %w: exclusive and shared at once", name, fs.ErrInvalid)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("open metadata %s: %w: %w", name, fs.ErrInvalid, err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	s := &Store{name: name, log: opts.Logger.With("component", "pgmeta", "db", name)}
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("open metadata %s: %w", name, translate(err))
	}
	defer func() {
		if err != nil {
			s.pool.Close()
			err = fmt.Errorf("open metadata %s: %w", name, err)
		}
	}()
	ms, err := migrations()
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, s.pool, ms, s.log); err != nil {
		return nil, err
	}
	if opts.Exclusive || opts.Shared {
		if s.owner, err = takeOwnership(ctx, s.pool, opts.Shared); err != nil {
			return nil, err
		}
	}
	s.db = stdlib.OpenDBFromPool(s.pool)
	return s, nil
}

// ownerLockKey is the key of the advisory lock an Exclusive Store holds
// (the first 8 bytes of "fks-ownr").
const ownerLockKey int64 = 0x666b732d6f776e72

// ownerWait is how long takeOwnership tries again before it reports the
// store busy: a process killed while it held the store leaves the lock to
// its server process, which releases it once it notices the connection
// gone (at once when idle, after the statement it runs otherwise).
const ownerWait = 500 * time.Millisecond

// takeOwnership takes the owner lock, exclusive or shared, on a connection
// taken out of the pool, which keeps it until Close (which releases it).
func takeOwnership(ctx context.Context, pool *pgxpool.Pool, shared bool) (*pgx.Conn, error) {
	pc, err := pool.Acquire(ctx)
	if err != nil {
		return nil, translate(err)
	}
	conn := pc.Hijack()
	var got bool
	query := `SELECT pg_try_advisory_lock($1)`
	if shared {
		query = `SELECT pg_try_advisory_lock_shared($1)`
	}
	for deadline := time.Now().Add(ownerWait); ; time.Sleep(ownerWait / 20) {
		if err := conn.QueryRow(ctx, query, ownerLockKey).Scan(&got); err != nil {
			conn.Close(context.Background())
			return nil, translate(err)
		}
		if got || time.Now().After(deadline) {
			break
		}
	}
	if !got {
		conn.Close(context.Background())
		if shared {
			return nil, fmt.Errorf("%w: a process has this store's database open for itself alone", errdefs.ErrBusy)
		}
		return nil, fmt.Errorf("%w: another process has this store's database open", errdefs.ErrBusy)
	}
	return conn, nil
}

// checkURL refuses a URL that is not postgres:// or postgresql://, or
// that holds a password, and returns it for messages.
func checkURL(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("open metadata: %w: want a postgres://… URL", fs.ErrInvalid)
	}
	if _, ok := u.User.Password(); ok || u.Query().Has("password") {
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return "", fmt.Errorf("open metadata %s: %w: the URL holds a password; "+
			"give it in the environment instead (PGPASSWORD, or a ~/.pgpass or $PGPASSFILE entry)",
			u.Redacted(), fs.ErrInvalid)
	}
	return u.String(), nil
}

// View implements meta.Store: fn runs in a REPEATABLE READ, READ ONLY
// transaction, one snapshot of the database taken at its first statement.
// Writes through the Tx fail with errdefs.ErrReadOnly.
func (s *Store) View(ctx context.Context, fn func(meta.Tx) error) error {
	if err := s.start("view"); err != nil {
		return err
	}
	defer s.calls.Done()
	sqlTx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("begin view: %w", translate(err))
	}
	defer sqlTx.Rollback()
	t := sqltx.New(ctx, sqltx.Queries(sqlTx), translate, true)
	defer t.Finish()
	return fn(t)
}

// maxAttempts bounds how often Update runs fn when its transaction keeps
// failing with a serialization failure or deadlock.
const maxAttempts = 50

// Update implements meta.Store: fn runs in a SERIALIZABLE transaction of
// its own (concurrent Updates run side by side, PostgreSQL orders them);
// when the transaction fails with a serialization failure or a deadlock
// (SQLSTATE 40001, 40P01), at fn's statements or at COMMIT, it is rolled
// back and fn runs again, after a random wait (retryWait), up to maxAttempts
// times (then the error wraps errdefs.ErrBusy). When ctx is done before fn
// starts, fn does not run and Update returns ctx's error; once fn runs its
// statements are not interrupted. A panic in fn rolls the transaction
// back and is re-raised.
func (s *Store) Update(ctx context.Context, fn func(meta.Tx) error) error {
	if err := s.start("update"); err != nil {
		return err
	}
	defer s.calls.Done()
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("update: %w", err)
		}
		err := s.updateOnce(context.WithoutCancel(ctx), fn)
		if err == nil || !retryable(err) || attempt == maxAttempts {
			return err
		}
		time.Sleep(retryWait(attempt))
	}
}

// retryWait is the pause before attempt+1: exponential backoff with full
// jitter, from up to 1 ms doubling to up to 128 ms. Writers that all
// update one row (a popular inline body's touch, a workspace's head
// generation from several processes) otherwise keep colliding at the
// same short intervals until they run out of attempts.
func retryWait(attempt int) time.Duration {
	return time.Millisecond/4 + rand.N(time.Millisecond<<min(attempt-1, 7))
}

// The collection barrier (docs/decisions/018): every Update holds a
// transaction advisory lock shared from its start (qBegin, one round trip
// with BEGIN), and meta.GCTx.CollectionClock takes it exclusive (qBarrier)
// before it reads the clock, so it waits for the Updates in flight and
// holds back new ones until it commits. The key is the first 8 bytes of
// "fks-barr", outside meta.Locker's 32-bit hashes.
const (
	qBegin   = `BEGIN ISOLATION LEVEL SERIALIZABLE; SELECT pg_advisory_xact_lock_shared(7380119053137965682)`
	qBarrier = `SELECT pg_advisory_xact_lock(7380119053137965682)`
)

// updateOnce runs fn in one transaction and commits it if fn succeeds.
// The transaction is begun by hand on a pooled connection (qBegin), so
// that taking the barrier costs no round trip of its own.
func (s *Store) updateOnce(ctx context.Context, fn func(meta.Tx) error) (err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", translate(err))
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, qBegin); err != nil {
		discard(conn)
		return fmt.Errorf("begin transaction: %w", translate(err))
	}
	committed := false
	defer func() {
		if committed {
			return
		}
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
			discard(conn)
		}
	}()
	t := sqltx.New(ctx, sqltx.Queries(conn), translate, false)
	t.SetBarrier(qBarrier)
	err = fn(t)
	t.Finish()
	if err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("commit transaction: %w", translate(err))
	}
	committed = true
	return nil
}

// discard keeps conn, whose transaction may be left open, out of the pool:
// database/sql closes a connection that reports driver.ErrBadConn.
func discard(conn *sql.Conn) {
	conn.Raw(func(any) error { return driver.ErrBadConn })
}

// GetNode implements meta.Store with one query outside any transaction.
func (s *Store) GetNode(ctx context.Context, h cas.Hash) ([]byte, error) {
	return s.getObject(ctx, "get node", sqltx.QGetNode, h)
}

// GetInline implements meta.Store.
func (s *Store) GetInline(ctx context.Context, h cas.Hash) ([]byte, error) {
	return s.getObject(ctx, "get inline body", sqltx.QGetInline, h)
}

// GetInlines implements meta.Store: one query per getInlinesBatch hashes,
// outside any transaction.
func (s *Store) GetInlines(ctx context.Context, hs []cas.Hash, fn func(cas.Hash, []byte) error) error {
	return s.getInlines(ctx, hs, false, func(h cas.Hash, data []byte, _ bool) error { return fn(h, data) })
}

// GetCheckedInlines implements meta.CheckedInlines: GetInlines, each body
// checked against its stored CRC-32C (sqltx.InlineChecked).
func (s *Store) GetCheckedInlines(ctx context.Context, hs []cas.Hash, fn func(cas.Hash, []byte, bool) error) error {
	return s.getInlines(ctx, hs, true, fn)
}

// getInlines reads the bodies of hs in batches of getInlinesBatch; with
// check, checked reports that a body matched its stored checksum.
func (s *Store) getInlines(ctx context.Context, hs []cas.Hash, check bool, fn func(h cas.Hash, data []byte, checked bool) error) error {
	const op = "get inline bodies"
	if err := s.start(op); err != nil {
		return err
	}
	defer s.calls.Done()
	keys := make([][]byte, 0, getInlinesBatch)
	for len(hs) > 0 {
		n := min(len(hs), getInlinesBatch)
		keys = keys[:0]
		for i := range hs[:n] {
			keys = append(keys, hs[i][:])
		}
		if err := s.queryInlines(ctx, keys, check, fn); err != nil {
			return fmt.Errorf("%s: %w", op, translate(err))
		}
		hs = hs[n:]
	}
	return nil
}

// getInlinesBatch bounds the hashes of one GetInlines query, and so the
// bytes one result holds (inline bodies are at most 64 KiB).
const getInlinesBatch = 256

// queryInlines runs one query for the bodies of keys.
func (s *Store) queryInlines(ctx context.Context, keys [][]byte, check bool, fn func(cas.Hash, []byte, bool) error) error {
	rows, err := s.pool.Query(ctx, qGetInlines, keys)
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		k, data []byte
		crc     sql.NullInt64
	)
	for rows.Next() {
		if err := rows.Scan(&k, &data, &crc); err != nil { // a fresh data each row
			return err
		}
		h, err := cas.FromBytes(k)
		if err != nil {
			return err
		}
		if err := fn(h, data, check && sqltx.InlineChecked(data, crc.Int64, crc.Valid)); err != nil {
			return err
		}
	}
	return rows.Err()
}

// qGetInlines selects the inline bodies of an array of hashes, with their
// checksums.
const qGetInlines = `SELECT hash, data, crc FROM inline_bodies WHERE hash = ANY($1)`

func (s *Store) getObject(ctx context.Context, op, query string, h cas.Hash) ([]byte, error) {
	if err := s.start(op); err != nil {
		return nil, err
	}
	defer s.calls.Done()
	var data []byte
	if err := s.pool.QueryRow(ctx, query, h[:]).Scan(&data); err != nil {
		return nil, fmt.Errorf("%s %s: %w", op, h.Short(), translate(err))
	}
	return data, nil
}

// start registers a call with Close, which waits for it; the caller calls
// s.calls.Done when finished. A closed store is fs.ErrClosed.
func (s *Store) start(op string) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return fmt.Errorf("%s: metadata %s: %w", op, s.name, fs.ErrClosed)
	}
	s.calls.Add(1)
	return nil
}

// Close waits for the calls in flight, then closes the connections. Calls
// after Close, Close included, fail with fs.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("close: metadata %s: %w", s.name, fs.ErrClosed)
	}
	s.closed = true
	s.mu.Unlock()
	s.calls.Wait()
	err := s.db.Close()
	if s.owner != nil {
		// Released before Close returns: the next process may open the
		// store at once, not once the server process has ended the session.
		// A connection that broke (the server restarted) holds nothing: its
		// session is over, and so is the lock.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = s.owner.Exec(ctx, `SELECT pg_advisory_unlock_all()`)
		cancel()
		err = errors.Join(err, s.owner.Close(context.Background()))
	}
	s.pool.Close()
	if err != nil {
		return fmt.Errorf("close metadata %s: %w", s.name, err)
	}
	return nil
}
