package sqlitemeta

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"log/slog"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta/internal/sqltx"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrations returns the embedded migrations in version order.
func migrations() ([]sqltx.Migration, error) { return sqltx.Migrations(migrationFS, "migrations") }

const (
	qCreateMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    BIGINT PRIMARY KEY,
		applied_at BIGINT NOT NULL
	)`
	qSchemaVersion   = `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`
	qRecordMigration = `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, ` + nowFunc + `())`
)

// migrate brings the schema on conn up to date with ms, each migration in
// its own transaction. A database whose schema is newer than ms is refused
// with errors.ErrUnsupported.
func migrate(ctx context.Context, conn *sql.Conn, ms []sqltx.Migration, log *slog.Logger) error {
	if _, err := conn.ExecContext(ctx, qCreateMigrations); err != nil {
		return fmt.Errorf("migrate schema: %w", translate(err))
	}
	var from int
	if err := conn.QueryRowContext(ctx, qSchemaVersion).Scan(&from); err != nil {
		return fmt.Errorf("read schema version: %w", translate(err))
	}
	for {
		done, err := migrateStep(ctx, conn, ms, log)
		if err != nil {
			return err
		}
		if done {
			break
		}
	}
	for _, m := range ms[min(from, len(ms)):] {
		if after := afterMigration[m.Version]; after != nil {
			if err := after(ctx, conn); err != nil {
				return fmt.Errorf("after migration %s: %w", m.Name, err)
			}
		}
	}
	return nil
}

// migrateStep applies the next migration, if any, in one write transaction
// that first re-reads the version, so concurrent openers apply it once.
// Foreign keys are off while it runs (a table rebuilt as SQLite prescribes
// must not cascade its drop to the tables referring to it) and checked
// before it commits.
func migrateStep(ctx context.Context, conn *sql.Conn, ms []sqltx.Migration, log *slog.Logger) (done bool, err error) {
	if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
		return false, fmt.Errorf("migrate schema: %w", translate(err))
	}
	defer func() {
		if _, onErr := conn.ExecContext(context.Background(), "PRAGMA foreign_keys = ON"); onErr != nil {
			err = errors.Join(err, fmt.Errorf("migrate schema: %w", translate(onErr)))
		}
	}()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return false, fmt.Errorf("migrate schema: %w", translate(err))
	}
	defer func() {
		if err != nil {
			_, rbErr := conn.ExecContext(context.Background(), "ROLLBACK")
			err = errors.Join(err, rbErr)
		}
	}()
	if _, err := conn.ExecContext(ctx, qCreateMigrations); err != nil {
		return false, fmt.Errorf("migrate schema: %w", translate(err))
	}
	var version int
	if err := conn.QueryRowContext(ctx, qSchemaVersion).Scan(&version); err != nil {
		return false, fmt.Errorf("read schema version: %w", translate(err))
	}
	if version > len(ms) {
		return false, fmt.Errorf("open database: schema version %d is newer than this build supports (%d): %w",
			version, len(ms), errors.ErrUnsupported)
	}
	if version == len(ms) {
		if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
			return false, fmt.Errorf("migrate schema: %w", translate(err))
		}
		return true, nil
	}
	m := ms[version]
	if _, err := conn.ExecContext(ctx, m.SQL); err != nil {
		return false, fmt.Errorf("apply migration %s: %w", m.Name, translate(err))
	}
	if hook := migrationHooks[m.Version]; hook != nil {
		if err := hook(ctx, conn); err != nil {
			return false, fmt.Errorf("apply migration %s: %w", m.Name, err)
		}
	}
	if err := foreignKeyCheck(ctx, conn); err != nil {
		return false, fmt.Errorf("apply migration %s: %w", m.Name, err)
	}
	if _, err := conn.ExecContext(ctx, qRecordMigration, m.Version); err != nil {
		return false, fmt.Errorf("record migration %s: %w", m.Name, translate(err))
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return false, fmt.Errorf("commit migration %s: %w", m.Name, translate(err))
	}
	log.Info("applied schema migration", "version", m.Version, "name", m.Name)
	return false, nil
}

// foreignKeyCheck fails with errdefs.ErrCorrupt if a row refers to a
// missing parent.
func foreignKeyCheck(ctx context.Context, conn *sql.Conn) error {
	rows, err := conn.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		return translate(err)
	}
	defer rows.Close()
	if rows.Next() {
		var (
			table, parent string
			rowid         sql.NullInt64
			fk            int
		)
		if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
			return translate(err)
		}
		return fmt.Errorf("%w: a row of %s refers to a missing row of %s", errdefs.ErrCorrupt, table, parent)
	}
	return translate(rows.Err())
}

// migrationConn is a connection as sqltx's migration steps use it.
type migrationConn struct{ conn *sql.Conn }

func (c migrationConn) Each(ctx context.Context, query string, scan func(func(...any) error) error) error {
	rows, err := c.conn.QueryContext(ctx, query)
	if err != nil {
		return translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows.Scan); err != nil {
			return err
		}
	}
	return translate(rows.Err())
}

func (c migrationConn) Exec(ctx context.Context, query string, args ...any) error {
	_, err := c.conn.ExecContext(ctx, query, args...)
	return translate(err)
}
