-- 0008: tenants (issue 10, §4; docs/decisions/014). A tenant is a namespace
-- of workspaces: names are unique per tenant, not per store. Existing
-- workspaces go to the tenant 'default'.
CREATE TABLE tenants (
    name       TEXT PRIMARY KEY,
    created_at BIGINT NOT NULL
);
INSERT INTO tenants (name, created_at) VALUES ('default', forkspace_now_ns());

-- The unique constraint of workspaces.name cannot be dropped in place, so
-- the table is rebuilt (SQLite's twelve steps: migrations run with foreign
-- keys off and checked before they commit, see migrate.go): the references
-- of checkpoints, staging and merge_conflicts name "workspaces", which is
-- the new table once renamed.
CREATE TABLE workspaces_0008 (
    id                TEXT PRIMARY KEY,
    tenant            TEXT NOT NULL DEFAULT 'default',
    name              TEXT NOT NULL,
    root              BLOB,
    parent_id         TEXT NOT NULL DEFAULT '',
    origin_checkpoint TEXT NOT NULL DEFAULT '',
    max_bytes         BIGINT NOT NULL DEFAULT 0,
    max_entries       BIGINT NOT NULL DEFAULT 0,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    UNIQUE (tenant, name)
);
INSERT INTO workspaces_0008 (id, tenant, name, root, parent_id, origin_checkpoint, max_bytes, max_entries, created_at, updated_at)
    SELECT id, 'default', name, root, parent_id, origin_checkpoint, max_bytes, max_entries, created_at, updated_at FROM workspaces;
DROP TABLE workspaces;
ALTER TABLE workspaces_0008 RENAME TO workspaces;
