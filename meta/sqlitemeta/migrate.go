package sqlitemeta

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strconv"
	"strings"

	"github.com/forkspace/forkspace/errdefs"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one numbered schema step.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order. Files are
// named NNNN_title.sql and numbered 1, 2, … without gaps.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []migration
	for i, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != i+1 {
			return nil, fmt.Errorf("read migration %s: %w: want number %d", e.Name(), fs.ErrInvalid, i+1)
		}
		body, err := migrationFS.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(body)})
	}
	return ms, nil
}

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
func migrate(ctx context.Context, conn *sql.Conn, ms []migration, log *slog.Logger) error {
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
		if after := afterMigration[m.version]; after != nil {
			if err := after(ctx, conn); err != nil {
				return fmt.Errorf("after migration %s: %w", m.name, err)
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
func migrateStep(ctx context.Context, conn *sql.Conn, ms []migration, log *slog.Logger) (done bool, err error) {
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
	if _, err := conn.ExecContext(ctx, m.sql); err != nil {
		return false, fmt.Errorf("apply migration %s: %w", m.name, translate(err))
	}
	if hook := migrationHooks[m.version]; hook != nil {
		if err := hook(ctx, conn); err != nil {
			return false, fmt.Errorf("apply migration %s: %w", m.name, err)
		}
	}
	if err := foreignKeyCheck(ctx, conn); err != nil {
		return false, fmt.Errorf("apply migration %s: %w", m.name, err)
	}
	if _, err := conn.ExecContext(ctx, qRecordMigration, m.version); err != nil {
		return false, fmt.Errorf("record migration %s: %w", m.name, translate(err))
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return false, fmt.Errorf("commit migration %s: %w", m.name, translate(err))
	}
	log.Info("applied schema migration", "version", m.version, "name", m.name)
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
