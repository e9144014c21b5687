-- 0004: packs (docs/decisions/022). Small blobs of a remote blob store are
-- written together in immutable pack objects; pack_entries says where each
-- packed blob is. A pack is recorded (uploading) before its object is
-- written, made live with its entries in one transaction, and retired once
-- no entry is left in it; its object is deleted after the grace period.
CREATE TABLE IF NOT EXISTS packs (
    id         BYTEA PRIMARY KEY,
    size       BIGINT NOT NULL,
    state      TEXT COLLATE "C" NOT NULL CHECK (state IN ('uploading', 'live', 'retired')),
    created_at BIGINT NOT NULL,
    retired_at BIGINT
);

CREATE TABLE IF NOT EXISTS pack_entries (
    hash       BYTEA PRIMARY KEY,
    pack       BYTEA NOT NULL,
    pos        BIGINT NOT NULL,
    size       BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX IF NOT EXISTS pack_entries_by_pack ON pack_entries (pack);
