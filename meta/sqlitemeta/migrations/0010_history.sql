-- 0010: time travel (issue 14; docs/decisions/016-time-travel.md).
-- exec's command text (bounded) in the audit log.
ALTER TABLE audit_log ADD COLUMN command TEXT NOT NULL DEFAULT '';

-- Every staging write is also appended to staging_log under a version from
-- the counter 'staging_log'. A workspace's staging table equals, per key,
-- the newest log row with ver > its staging_base; a fold, a reset and a
-- fork move the base and log the rows that stay above it.
ALTER TABLE workspaces ADD COLUMN staging_base BIGINT NOT NULL DEFAULT 0;

CREATE TABLE staging_log (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    ver          BIGINT NOT NULL,
    key          BLOB NOT NULL,
    value        BLOB,
    deleted      BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (workspace_id, ver, key)
) WITHOUT ROWID;

-- The staging rows of existing workspaces are their first epoch.
INSERT INTO staging_log (workspace_id, ver, key, value, deleted)
    SELECT workspace_id, 1, key, value, deleted FROM staging;
INSERT INTO counters (name, next) VALUES ('staging_log', 2);

-- The state an audited call produced: the head's root and the staging
-- rows of staging_log with base < ver' <= ver (newest per key).
CREATE TABLE audit_states (
    seq          BIGINT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    at           BIGINT NOT NULL,
    root         BLOB,
    base         BIGINT NOT NULL,
    ver          BIGINT NOT NULL
);

CREATE INDEX audit_states_by_workspace ON audit_states (workspace_id, seq);
