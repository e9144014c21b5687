-- 0002: garbage collection. touched_at is refreshed (database clock) each
-- time a node or inline body is stored again, so the collector never
-- deletes an object a writer re-created after its snapshot. Upload intents
-- are recorded before a blob is written and released with the metadata
-- that references it; gc_condemned drives the two-phase blob deletion.

ALTER TABLE nodes ADD COLUMN touched_at BIGINT NOT NULL DEFAULT 0;
UPDATE nodes SET touched_at = created_at;
ALTER TABLE inline_bodies ADD COLUMN touched_at BIGINT NOT NULL DEFAULT 0;
UPDATE inline_bodies SET touched_at = created_at;

CREATE TABLE upload_intents (
    id         BIGINT NOT NULL,
    hash       BLOB NOT NULL,
    created_at BIGINT NOT NULL,
    released   BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (id, hash)
);

CREATE INDEX upload_intents_by_hash ON upload_intents (hash);

CREATE TABLE gc_condemned (
    hash  BLOB PRIMARY KEY,
    state TEXT NOT NULL CHECK (state IN ('condemned', 'deleting'))
);
