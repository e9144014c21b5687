-- 0003: provider refs of agent sessions (package provider): one row per
-- (session, workspace name), the ref as JSON text.

CREATE TABLE session_refs (
    session    TEXT NOT NULL,
    name       TEXT NOT NULL,
    ref        BLOB NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (session, name)
);
