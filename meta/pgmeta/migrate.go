package pgmeta

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"

	"github.com/forkspace/forkspace/meta/internal/sqltx"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrations returns the embedded migrations in version order.
func migrations() ([]sqltx.Migration, error) { return sqltx.Migrations(migrationFS, "migrations") }

// migrateLockKey is the key of the advisory lock that serializes
// migrations of one database (the first 8 bytes of "fks-migr").
const migrateLockKey int64 = 0x666b732d6d696772

const (
	qCreateMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    BIGINT PRIMARY KEY,
		applied_at BIGINT NOT NULL
	)`
	qSchemaVersion   = `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`
	qRecordMigration = `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, ` + sqltx.NowFunc + `())`
)

// migrate brings the schema up to date with ms, each migration in its own
// transaction, holding a session advisory lock so that processes opening
// the database at once apply each migration once and never see a schema
// half made. A database whose schema is newer than ms is refused with
// errors.ErrUnsupported.
func migrate(ctx context.Context, pool *pgxpool.Pool, ms []sqltx.Migration, log *slog.Logger) (err error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate schema: %w", translate(err))
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLockKey); err != nil {
		return fmt.Errorf("migrate schema: lock: %w", translate(err))
	}
	defer func() {
		if _, unErr := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLockKey); unErr != nil {
			// The lock goes with the session: close it rather than
			// return a connection that holds it to the pool.
			conn.Conn().Close(context.Background())
			err = errors.Join(err, fmt.Errorf("migrate schema: unlock: %w", unErr))
		}
	}()
	if _, err := conn.Exec(ctx, qCreateMigrations); err != nil {
		return fmt.Errorf("migrate schema: %w", translate(err))
	}
	var version int
	if err := conn.QueryRow(ctx, qSchemaVersion).Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", translate(err))
	}
	if version > len(ms) {
		return fmt.Errorf("open database: schema version %d is newer than this build supports (%d): %w",
			version, len(ms), errors.ErrUnsupported)
	}
	for _, m := range ms[version:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			if step := migrationSteps[m.Version]; step != nil {
				if err := step(ctx, migrationConn{tx}); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, qRecordMigration, m.Version)
			return err
		})
		if err != nil {
			return fmt.Errorf("apply migration %s: %w", m.Name, translate(err))
		}
		log.Info("applied schema migration", "version", m.Version, "name", m.Name)
	}
	return nil
}

// migrationSteps run in Go after the SQL of their migration, in the same
// transaction.
var migrationSteps = map[int]func(context.Context, sqltx.MigrationConn) error{
	5: sqltx.ConvertStaging,
}

// migrationConn is a migration's transaction as sqltx's steps use it.
type migrationConn struct{ tx pgx.Tx }

func (c migrationConn) Each(ctx context.Context, query string, scan func(func(...any) error) error) error {
	rows, err := c.tx.Query(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (c migrationConn) Exec(ctx context.Context, query string, args ...any) error {
	_, err := c.tx.Exec(ctx, query, args...)
	return err
}
