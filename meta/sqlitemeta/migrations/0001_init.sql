-- 0001: the initial schema. Timestamps are integer Unix nanoseconds taken
-- from the database clock (forkspace_now_ns()). Hashes are 32-byte BLOBs; a
-- NULL root is the empty tree.

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE counters (
    name TEXT PRIMARY KEY,
    next BIGINT NOT NULL
);

CREATE TABLE nodes (
    hash       BLOB PRIMARY KEY,
    data       BLOB NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE inline_bodies (
    hash       BLOB PRIMARY KEY,
    data       BLOB NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE workspaces (
    id                TEXT PRIMARY KEY,
    name              TEXT NOT NULL UNIQUE,
    root              BLOB,
    parent_id         TEXT NOT NULL DEFAULT '',
    origin_checkpoint TEXT NOT NULL DEFAULT '',
    max_bytes         BIGINT NOT NULL DEFAULT 0,
    max_entries       BIGINT NOT NULL DEFAULT 0,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);

CREATE TABLE checkpoints (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    label        TEXT NOT NULL DEFAULT '',
    root         BLOB,
    created_at   BIGINT NOT NULL
);

CREATE INDEX checkpoints_by_workspace ON checkpoints (workspace_id, created_at, id);

CREATE TABLE staging (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    key          BLOB NOT NULL,
    value        BLOB,
    deleted      BOOLEAN NOT NULL DEFAULT FALSE,
    seq          BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, key)
) WITHOUT ROWID;
