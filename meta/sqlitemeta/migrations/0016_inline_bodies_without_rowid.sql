-- 0016: inline_bodies becomes a WITHOUT ROWID table keyed by hash: one
-- B-tree instead of a rowid table plus its primary-key index, so a small
-- file's body costs a create one page instead of two, and a read one
-- lookup instead of two (docs/decisions/025-staging-records.md).
CREATE TABLE inline_bodies_by_hash (
    hash       BLOB PRIMARY KEY,
    data       BLOB NOT NULL,
    created_at BIGINT NOT NULL,
    touched_at BIGINT NOT NULL DEFAULT 0
) WITHOUT ROWID;

INSERT INTO inline_bodies_by_hash (hash, data, created_at, touched_at)
    SELECT hash, data, created_at, touched_at FROM inline_bodies;
DROP TABLE inline_bodies;
ALTER TABLE inline_bodies_by_hash RENAME TO inline_bodies;
