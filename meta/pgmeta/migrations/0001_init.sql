-- The PostgreSQL schema of meta.Store: the schema of meta/sqlitemeta's
-- migrations 0001-0010 as it stands after them, in one step. Types: BLOB is
-- BYTEA; timestamps stay BIGINT Unix nanoseconds from forkspace_now_ns(),
-- so the shared queries (meta/internal/sqltx) read and write the same
-- values on both databases; every TEXT column sorts bytewise (COLLATE "C"),
-- as SQLite's BINARY collation does, whatever the database's locale.

-- The database clock: Unix nanoseconds of the server's clock (microsecond
-- resolution), read at the moment of the call, not at the transaction's
-- start.
CREATE FUNCTION forkspace_now_ns() RETURNS BIGINT LANGUAGE SQL VOLATILE AS
$$ SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT * 1000 $$;

-- A setting's value may hold any bytes, NUL included, which TEXT cannot.
CREATE TABLE settings (
    key   TEXT COLLATE "C" PRIMARY KEY,
    value BYTEA NOT NULL
);

CREATE TABLE counters (
    name TEXT COLLATE "C" PRIMARY KEY,
    next BIGINT NOT NULL
);

CREATE TABLE nodes (
    hash       BYTEA PRIMARY KEY,
    data       BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    touched_at BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE inline_bodies (
    hash       BYTEA PRIMARY KEY,
    data       BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    touched_at BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE tenants (
    name       TEXT COLLATE "C" PRIMARY KEY,
    created_at BIGINT NOT NULL
);
INSERT INTO tenants (name, created_at) VALUES ('default', forkspace_now_ns());

CREATE TABLE workspaces (
    id                TEXT COLLATE "C" PRIMARY KEY,
    tenant            TEXT COLLATE "C" NOT NULL DEFAULT 'default',
    name              TEXT COLLATE "C" NOT NULL,
    root              BYTEA,
    parent_id         TEXT COLLATE "C" NOT NULL DEFAULT '',
    origin_checkpoint TEXT COLLATE "C" NOT NULL DEFAULT '',
    max_bytes         BIGINT NOT NULL DEFAULT 0,
    max_entries       BIGINT NOT NULL DEFAULT 0,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    staging_base      BIGINT NOT NULL DEFAULT 0,
    UNIQUE (tenant, name)
);

CREATE TABLE checkpoints (
    id           TEXT COLLATE "C" PRIMARY KEY,
    workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    label        TEXT COLLATE "C" NOT NULL DEFAULT '',
    root         BYTEA,
    created_at   BIGINT NOT NULL,
    kind         TEXT COLLATE "C" NOT NULL DEFAULT '',
    source       TEXT COLLATE "C" NOT NULL DEFAULT ''
);

CREATE INDEX checkpoints_by_workspace ON checkpoints (workspace_id, created_at, id);

CREATE TABLE staging (
    workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    key          BYTEA NOT NULL,
    value        BYTEA,
    deleted      BOOLEAN NOT NULL DEFAULT FALSE,
    seq          BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, key)
);

CREATE TABLE upload_intents (
    id         BIGINT NOT NULL,
    hash       BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    released   BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (id, hash)
);

CREATE INDEX upload_intents_by_hash ON upload_intents (hash);

CREATE TABLE gc_condemned (
    hash  BYTEA PRIMARY KEY,
    state TEXT COLLATE "C" NOT NULL CHECK (state IN ('condemned', 'deleting'))
);

CREATE TABLE session_refs (
    session    TEXT COLLATE "C" NOT NULL,
    name       TEXT COLLATE "C" NOT NULL,
    ref        BYTEA NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (session, name)
);

CREATE TABLE audit_log (
    seq          BIGINT PRIMARY KEY,
    at           BIGINT NOT NULL,
    workspace_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    actor        TEXT COLLATE "C" NOT NULL DEFAULT '',
    session      TEXT COLLATE "C" NOT NULL DEFAULT '',
    tool         TEXT COLLATE "C" NOT NULL,
    args_digest  TEXT COLLATE "C" NOT NULL DEFAULT '',
    error        TEXT COLLATE "C" NOT NULL DEFAULT '',
    duration_ns  BIGINT NOT NULL DEFAULT 0,
    changed      TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    checkpoint   TEXT COLLATE "C" NOT NULL DEFAULT '',
    detail       TEXT COLLATE "C" NOT NULL DEFAULT '',
    command      TEXT COLLATE "C" NOT NULL DEFAULT ''
);

CREATE INDEX audit_log_by_workspace ON audit_log (workspace_id, seq);
CREATE INDEX audit_log_by_session ON audit_log (session, seq);

CREATE TABLE checkpoint_staging (
    checkpoint_id TEXT COLLATE "C" NOT NULL REFERENCES checkpoints (id) ON DELETE CASCADE,
    key           BYTEA NOT NULL,
    value         BYTEA,
    deleted       BOOLEAN NOT NULL DEFAULT FALSE,
    seq           BIGINT NOT NULL,
    PRIMARY KEY (checkpoint_id, key)
);

CREATE TABLE merge_conflicts (
    workspace_id  TEXT COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    path          TEXT COLLATE "C" NOT NULL,
    kind          TEXT COLLATE "C" NOT NULL,
    detail        TEXT COLLATE "C" NOT NULL DEFAULT '',
    base_state    TEXT COLLATE "C" NOT NULL DEFAULT '',
    base_path     TEXT COLLATE "C" NOT NULL DEFAULT '',
    base_hash     TEXT COLLATE "C" NOT NULL DEFAULT '',
    ours_state    TEXT COLLATE "C" NOT NULL DEFAULT '',
    ours_path     TEXT COLLATE "C" NOT NULL DEFAULT '',
    ours_hash     TEXT COLLATE "C" NOT NULL DEFAULT '',
    theirs_state  TEXT COLLATE "C" NOT NULL DEFAULT '',
    theirs_path   TEXT COLLATE "C" NOT NULL DEFAULT '',
    theirs_hash   TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, path)
);

CREATE TABLE tokens (
    id         TEXT COLLATE "C" PRIMARY KEY,
    tenant     TEXT COLLATE "C" NOT NULL,
    pattern    TEXT COLLATE "C" NOT NULL,
    perms      TEXT COLLATE "C" NOT NULL,
    label      TEXT COLLATE "C" NOT NULL DEFAULT '',
    expires_at BIGINT NOT NULL DEFAULT 0,
    parent_id  TEXT COLLATE "C" NOT NULL DEFAULT '',
    hash       BYTEA NOT NULL,
    s3_secret  TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    revoked_at BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX tokens_by_parent ON tokens (parent_id);

CREATE TABLE staging_log (
    workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    ver          BIGINT NOT NULL,
    key          BYTEA NOT NULL,
    value        BYTEA,
    deleted      BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (workspace_id, ver, key)
);
INSERT INTO counters (name, next) VALUES ('staging_log', 2);

CREATE TABLE audit_states (
    seq          BIGINT PRIMARY KEY,
    workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    at           BIGINT NOT NULL,
    root         BYTEA,
    base         BIGINT NOT NULL,
    ver          BIGINT NOT NULL
);

CREATE INDEX audit_states_by_workspace ON audit_states (workspace_id, seq);
