-- 0005: a workspace's staging delta is an append-only log of commit
-- records (docs/decisions/025-staging-records.md). staging (a row per key)
-- and staging_log (a row per key and commit) become staging_records, a row
-- per commit holding its rows encoded; checkpoint_staging (a row per key)
-- becomes checkpoint_deltas, a row per checkpoint. A workspace's delta is,
-- per key, the newest row of its records above staging_base; the records
-- at or below it are history recorded states read. The migration's Go step
-- (sqltx.ConvertStaging) moves the rows and drops the old tables.
CREATE TABLE staging_records (
    workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    ver          BIGINT NOT NULL,
    body         BYTEA NOT NULL,
    PRIMARY KEY (workspace_id, ver)
);

-- A checkpoint's delta is its rows encoded (body), or, for a checkpoint of
-- the workspace whose delta it took, a reference to that workspace's
-- records in (base, ver] (body NULL), which the records' pruning keeps.
CREATE TABLE checkpoint_deltas (
    checkpoint_id TEXT COLLATE "C" PRIMARY KEY REFERENCES checkpoints (id) ON DELETE CASCADE,
    body          BYTEA,
    workspace_id  TEXT COLLATE "C",
    base          BIGINT,
    ver           BIGINT
);

-- sqltx.HasBytesFunc: whether a record's bytes contain a key (StagedKey).
CREATE FUNCTION forkspace_has_bytes(haystack BYTEA, needle BYTEA) RETURNS BOOLEAN
    LANGUAGE SQL IMMUTABLE STRICT AS $$ SELECT position(needle IN haystack) > 0 $$;
