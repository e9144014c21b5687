package sqlitemeta

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta/internal/sqltx"
)

// migrationHooks run in Go after the SQL of their migration, in the same
// transaction.
var migrationHooks = map[int]func(ctx context.Context, conn *sql.Conn) error{
	11: scrubRecords,
	15: func(ctx context.Context, conn *sql.Conn) error { return sqltx.ConvertStaging(ctx, migrationConn{conn}) },
}

// afterMigration run in Go, outside any transaction, once every
// migration is applied, for the migrations applied by this open.
var afterMigration = map[int]func(ctx context.Context, conn *sql.Conn) error{
	11: vacuumIfMounted,
}

// vacuumIfMounted rebuilds the database file (VACUUM) when the store has,
// or had in its trees, mounts: earlier builds may have left their
// credentials in free space (rows folded or deleted before 0011), which
// secure_delete does not reach. Stores that never had a mount skip it.
func vacuumIfMounted(ctx context.Context, conn *sql.Conn) error {
	// The staging log is staging_log up to 0014, staging_records since
	// 0015 (whose rows hold the keys encoded).
	logged := `SELECT 1 FROM staging_records WHERE instr(body, CAST('` + mountAttr + `' AS BLOB)) > 0`
	var old bool
	if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'staging_log')`).Scan(&old); err != nil {
		return translate(err)
	}
	if old {
		logged = `SELECT 1 FROM staging_log WHERE instr(key, CAST('` + mountAttr + `' AS BLOB)) > 0`
	}
	var mounted bool
	err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM settings WHERE key LIKE 'mount.table.%')
		OR EXISTS (SELECT 1 FROM nodes WHERE instr(data, CAST('`+mountAttr+`' AS BLOB)) > 0)
		OR EXISTS (`+logged+`)`).Scan(&mounted)
	if err != nil || !mounted {
		return translate(err)
	}
	if _, err := conn.ExecContext(ctx, `VACUUM`); err != nil {
		return translate(err)
	}
	return nil
}

// mountAttr is the name of the xattr a mount root's index record is kept
// in (mount.rootAttr), and xattrKind the kind byte of xattr keys
// ('i' ino(8) 'x' name; vfs/keys.go).
const (
	mountAttr = "trusted.forkspace.mount"
	xattrKind = 'x'
)

func isMountAttrKey(k []byte) bool {
	return len(k) == 10+len(mountAttr) && k[0] == 'i' && k[9] == xattrKind && string(k[10:]) == mountAttr
}

// scrubTrees redacts the mount index records folded into tree nodes.
// Nodes are content-addressed and verified, so a record holding
// credentials is removed by building each tree that holds it again with
// the record redacted (kv.Apply), pointing every workspace, checkpoint and
// audited state at the new root, and deleting the old leaf nodes that
// held the record. Stores without such a record (no node
// mentions mountAttr, or none holds credentials) cost one scan of the
// nodes table.
func scrubTrees(ctx context.Context, conn *sql.Conn) error {
	var mentions int
	if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM nodes WHERE instr(data, CAST('`+mountAttr+`' AS BLOB)) > 0`).Scan(&mentions); err != nil {
		return translate(err)
	}
	if mentions == 0 {
		return nil
	}
	var seedText string
	err := conn.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = 'tree_seed'`).Scan(&seedText)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // no store was ever created here: no trees
	}
	if err != nil {
		return translate(err)
	}
	seed, err := strconv.ParseUint(seedText, 10, 64)
	if err != nil {
		return fmt.Errorf("scrub trees: tree_seed %q: %w", seedText, err)
	}
	trees := kv.New(connNodes{conn}, kv.Options{Seed: seed})
	roots, err := treeRoots(ctx, conn)
	if err != nil {
		return err
	}
	// Find the records holding credentials, and the leaves holding them,
	// walking each node once.
	dirtyKeys := map[string]bool{}
	dirtyLeaves := map[cas.Hash]bool{}
	seen := map[cas.Hash]bool{}
	for _, root := range roots {
		var cur cas.Hash
		err := trees.Walk(ctx, root, kv.WalkFuncs{
			Enter: func(h cas.Hash) bool {
				if seen[h] {
					return false
				}
				seen[h] = true
				return true
			},
			Node: func(h cas.Hash, _ int) error { cur = h; return nil },
			Leaf: func(k, v []byte) error {
				if isMountAttrKey(k) {
					if _, dirty := scrubSources(v); dirty {
						dirtyKeys[string(k)] = true
						dirtyLeaves[cur] = true
					}
				}
				return nil
			},
		})
		if err != nil {
			return fmt.Errorf("scrub trees: walk %s: %w", root.Short(), err)
		}
	}
	if len(dirtyKeys) == 0 {
		return nil
	}
	for _, root := range roots {
		var muts []kv.Mutation
		for k := range dirtyKeys {
			v, ok, err := trees.Get(ctx, root, []byte(k))
			if err != nil {
				return fmt.Errorf("scrub trees: read %s: %w", root.Short(), err)
			}
			if clean, dirty := scrubSources(v); ok && dirty {
				muts = append(muts, kv.Mutation{Key: []byte(k), Value: clean})
			}
		}
		if len(muts) == 0 {
			continue
		}
		next, nodes, err := trees.Apply(ctx, root, muts)
		if err != nil {
			return fmt.Errorf("scrub trees: rewrite %s: %w", root.Short(), err)
		}
		for _, n := range nodes {
			if _, err := conn.ExecContext(ctx, `INSERT INTO nodes (hash, data, created_at, touched_at) VALUES ($1, $2, `+nowFunc+`(), `+nowFunc+`()) ON CONFLICT (hash) DO UPDATE SET touched_at = excluded.touched_at`, n.Hash[:], n.Data); err != nil {
				return translate(err)
			}
		}
		for _, table := range rootTables {
			if _, err := conn.ExecContext(ctx, `UPDATE `+table+` SET root = $1 WHERE root = $2`, next[:], root[:]); err != nil {
				return translate(err)
			}
		}
	}
	for h := range dirtyLeaves {
		if _, err := conn.ExecContext(ctx, `DELETE FROM nodes WHERE hash = $1`, h[:]); err != nil {
			return translate(err)
		}
	}
	return nil
}

// scrubRecords is migration 0011's Go half: the mount index records in
// the staged tables (scrubStaged) and in trees (scrubTrees), with
// secure_delete on so the old bytes are zeroed, not left in free space.
func scrubRecords(ctx context.Context, conn *sql.Conn) (err error) {
	if _, err := conn.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
		return translate(err)
	}
	defer func() {
		if _, offErr := conn.ExecContext(context.Background(), `PRAGMA secure_delete = OFF`); offErr != nil {
			err = errors.Join(err, translate(offErr))
		}
	}()
	if err := scrubStaged(ctx, conn); err != nil {
		return err
	}
	return scrubTrees(ctx, conn)
}

// stagedTables hold staged rows (key, value) of workspaces and checkpoints.
var stagedTables = []string{"staging", "staging_log", "checkpoint_staging"}

// scrubStaged redacts the index records in stagedTables.
func scrubStaged(ctx context.Context, conn *sql.Conn) error {
	for _, table := range stagedTables {
		_, err := conn.ExecContext(ctx, `UPDATE `+table+` SET value = `+scrubFunc+`(value)
			WHERE substr(key, 10, 1) = CAST('x' AS BLOB) AND substr(key, 11) = CAST('`+mountAttr+`' AS BLOB)
			AND value IS NOT NULL AND `+scrubFunc+`(value) IS NOT value`)
		if err != nil {
			return translate(err)
		}
	}
	return nil
}

// rootTables are the tables whose root column names a tree.
var rootTables = []string{"workspaces", "checkpoints", "audit_states"}

// treeRoots lists the distinct roots of rootTables.
func treeRoots(ctx context.Context, conn *sql.Conn) ([]cas.Hash, error) {
	rows, err := conn.QueryContext(ctx, `SELECT root FROM workspaces WHERE root IS NOT NULL
		UNION SELECT root FROM checkpoints WHERE root IS NOT NULL
		UNION SELECT root FROM audit_states WHERE root IS NOT NULL`)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var roots []cas.Hash
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, translate(err)
		}
		h, err := cas.FromBytes(b)
		if err != nil {
			return nil, fmt.Errorf("scrub trees: root %x: %w", b, err)
		}
		roots = append(roots, h)
	}
	return roots, translate(rows.Err())
}

// connNodes reads nodes on the migration's connection (kv.NodeSource).
type connNodes struct{ conn *sql.Conn }

func (c connNodes) GetNode(ctx context.Context, h cas.Hash) ([]byte, error) {
	var data []byte
	err := c.conn.QueryRowContext(ctx, sqltx.QGetNode, h[:]).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("get node %s: %w", h.Short(), fs.ErrNotExist)
	}
	if err != nil {
		return nil, translate(err)
	}
	return bytes.Clone(data), nil
}
