package sqltx

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/forkspace/forkspace/meta"
)

// MigrationConn is what a migration step needs of a driver's connection
// inside the migration's transaction.
type MigrationConn interface {
	// Each runs query and calls scan for each row; scan reads the row
	// with the function it is given.
	Each(ctx context.Context, query string, scan func(row func(dest ...any) error) error) error
	Exec(ctx context.Context, query string, args ...any) error
}

const (
	// qOldLog reads the row-per-key staging log, each row with the seq its
	// key has in the staging table (the current delta's rows need it;
	// older rows' seq is never read).
	qOldLog = `SELECT l.workspace_id, l.ver, l.key, l.value, l.deleted, COALESCE(s.seq, 0)
		FROM staging_log AS l LEFT JOIN staging AS s ON s.workspace_id = l.workspace_id AND s.key = l.key
		ORDER BY l.workspace_id, l.ver, l.key`
	qOldStaging           = `SELECT s.workspace_id, w.staging_base, s.key, s.value, s.deleted, s.seq FROM staging AS s JOIN workspaces AS w ON w.id = s.workspace_id ORDER BY s.workspace_id, s.key`
	qOldCheckpointStaging = `SELECT checkpoint_id, key, value, deleted, seq FROM checkpoint_staging ORDER BY checkpoint_id, key`
	qConvertRecord        = `INSERT INTO staging_records (workspace_id, ver, body) VALUES ($1, $2, $3)`
	qConvertCheckpoint    = `INSERT INTO checkpoint_deltas (checkpoint_id, body) VALUES ($1, $2)`
)

// oldRow is a row of the row-per-key tables: its owner (workspace or
// checkpoint) and version.
type oldRow struct {
	owner string
	ver   int64
	row   meta.Staged
}

// ConvertStaging is the data step of the migration that introduces
// staging_records and checkpoint_deltas (sqlite 0015, pgmeta 0005): it
// writes each (workspace, version) of staging_log as one record and each
// checkpoint's checkpoint_staging rows as one delta, then drops the old
// tables. A staging row the log does not hold as its key's newest row
// above the workspace's base (the old invariant; kept in case a store
// broke it) is written in one more record on top, so no workspace's delta
// changes.
func ConvertStaging(ctx context.Context, c MigrationConn) error {
	logged, err := readOld(ctx, c, qOldLog, true)
	if err != nil {
		return err
	}
	staged, err := readOld(ctx, c, qOldStaging, true)
	if err != nil {
		return err
	}
	cps, err := readOld(ctx, c, qOldCheckpointStaging, false)
	if err != nil {
		return err
	}
	logged = append(logged, missingFromLog(logged, staged)...)
	slices.SortStableFunc(logged, func(a, b oldRow) int {
		return cmp.Or(cmp.Compare(a.owner, b.owner), cmp.Compare(a.ver, b.ver))
	})
	err = eachGroup(logged, func(a, b oldRow) bool { return a.owner == b.owner && a.ver == b.ver }, func(g []oldRow) error {
		return c.Exec(ctx, qConvertRecord, g[0].owner, g[0].ver, meta.AppendDelta(nil, rowsOf(g)))
	})
	if err != nil {
		return fmt.Errorf("convert staging log: %w", err)
	}
	err = eachGroup(cps, func(a, b oldRow) bool { return a.owner == b.owner }, func(g []oldRow) error {
		return c.Exec(ctx, qConvertCheckpoint, g[0].owner, meta.AppendDelta(nil, rowsOf(g)))
	})
	if err != nil {
		return fmt.Errorf("convert checkpoint staging rows: %w", err)
	}
	for _, q := range []string{`DROP TABLE staging_log`, `DROP TABLE staging`, `DROP TABLE checkpoint_staging`,
		`DELETE FROM counters WHERE name = 'staging_log'`} {
		if err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("convert staging: %w", err)
		}
	}
	return nil
}

// readOld reads rows (owner, ver, key, value, deleted, seq), or without
// ver (owner, key, value, deleted, seq).
func readOld(ctx context.Context, c MigrationConn, query string, withVer bool) ([]oldRow, error) {
	var out []oldRow
	err := c.Each(ctx, query, func(row func(...any) error) error {
		var (
			r     oldRow
			value []byte
		)
		dest := []any{&r.owner, &r.ver, &r.row.Key, &value, &r.row.Deleted, &r.row.Seq}
		if !withVer {
			dest = append(dest[:1], dest[2:]...)
		}
		if err := row(dest...); err != nil {
			return err
		}
		if len(value) > 0 {
			r.row.Value = value
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("convert staging: read old rows: %w", err)
	}
	return out, nil
}

// missingFromLog returns the staging rows (ver: their workspace's base)
// that logged, per workspace and key, does not hold as the newest row
// above that base, each as a row of one record after the workspace's
// newest.
func missingFromLog(logged, staged []oldRow) []oldRow {
	type wk struct{ ws, key string }
	newest := map[wk]oldRow{}
	top := map[string]int64{}
	for _, r := range logged {
		k := wk{r.owner, string(r.row.Key)}
		if prev, ok := newest[k]; !ok || r.ver >= prev.ver {
			newest[k] = r
		}
		top[r.owner] = max(top[r.owner], r.ver)
	}
	var out []oldRow
	for _, s := range staged {
		base := s.ver
		n, ok := newest[wk{s.owner, string(s.row.Key)}]
		if ok && n.ver > base && n.row.Deleted == s.row.Deleted && bytes.Equal(n.row.Value, s.row.Value) {
			continue
		}
		out = append(out, oldRow{owner: s.owner, ver: max(top[s.owner], base) + 1, row: s.row})
	}
	return out
}

// eachGroup calls fn with each run of rows that same holds between
// neighbours.
func eachGroup(rows []oldRow, same func(a, b oldRow) bool, fn func([]oldRow) error) error {
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && same(rows[i], rows[j]) {
			j++
		}
		if err := fn(rows[i:j]); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// rowsOf returns the staging rows of g.
func rowsOf(g []oldRow) []meta.Staged {
	out := make([]meta.Staged, len(g))
	for i, r := range g {
		out[i] = r.row
	}
	return out
}
