-- 0014: packs (docs/decisions/022). Small blobs of a remote blob store are
-- written together in immutable pack objects; pack_entries says where each
-- packed blob is. A pack is recorded (uploading) before its object is
-- written, made live with its entries in one transaction, and retired once
-- no entry is left in it; its object is deleted after the grace period.
-- IF NOT EXISTS: tests that rewind the schema re-apply it over itself.
CREATE TABLE IF NOT EXISTS packs (
    id         BLOB PRIMARY KEY,
    size       BIGINT NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('uploading', 'live', 'retired')),
    created_at BIGINT NOT NULL,
    retired_at BIGINT
);

CREATE TABLE IF NOT EXISTS pack_entries (
    hash       BLOB PRIMARY KEY,
    pack       BLOB NOT NULL,
    pos        BIGINT NOT NULL,
    size       BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX IF NOT EXISTS pack_entries_by_pack ON pack_entries (pack);
