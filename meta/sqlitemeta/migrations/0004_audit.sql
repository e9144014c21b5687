-- 0004: the audit log, one append-only row per mutating call. seq comes
-- from the counter "audit"; changed is a JSON array of paths; error is ''
-- for a call that succeeded.

CREATE TABLE audit_log (
    seq          BIGINT PRIMARY KEY,
    at           BIGINT NOT NULL,
    workspace_id TEXT NOT NULL DEFAULT '',
    actor        TEXT NOT NULL DEFAULT '',
    session      TEXT NOT NULL DEFAULT '',
    tool         TEXT NOT NULL,
    args_digest  TEXT NOT NULL DEFAULT '',
    error        TEXT NOT NULL DEFAULT '',
    duration_ns  BIGINT NOT NULL DEFAULT 0,
    changed      TEXT NOT NULL DEFAULT '[]',
    checkpoint   TEXT NOT NULL DEFAULT ''
);

CREATE INDEX audit_log_by_workspace ON audit_log (workspace_id, seq);
CREATE INDEX audit_log_by_session ON audit_log (session, seq);
