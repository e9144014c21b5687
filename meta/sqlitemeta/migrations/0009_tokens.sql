-- 0009: access tokens (package auth, docs/decisions/014). A token is a
-- scope: tenant, workspace name pattern, permissions, optional expiry
-- (0: none), the token it was minted from. Only the BLAKE3 hash of the
-- secret is kept; s3_secret is the secret key derived from it for the S3
-- door, whose signatures need the key itself. Rows are never deleted:
-- revocation sets revoked_at, and a token minted from a revoked one is
-- refused by walking parent_id.
CREATE TABLE tokens (
    id         TEXT PRIMARY KEY,
    tenant     TEXT NOT NULL,
    pattern    TEXT NOT NULL,
    perms      TEXT NOT NULL,
    label      TEXT NOT NULL DEFAULT '',
    expires_at BIGINT NOT NULL DEFAULT 0,
    parent_id  TEXT NOT NULL DEFAULT '',
    hash       BLOB NOT NULL,
    s3_secret  TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    revoked_at BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX tokens_by_parent ON tokens (parent_id);
