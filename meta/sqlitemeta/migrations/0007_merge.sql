-- 0007: merges (issue 14). A checkpoint has a kind: '' for the checkpoints
-- users take; 'base' for the state a fork started from, 'merged' for a state
-- a merge brought in (both are merge bases later), 'conflict' for the
-- versions an unfinished merge keeps for its conflicts. They are roots of
-- garbage collection like any checkpoint and go with their workspace.
-- source is the workspace whose state a 'base' or 'merged' checkpoint is.
ALTER TABLE checkpoints ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE checkpoints ADD COLUMN source TEXT NOT NULL DEFAULT '';

-- One row per unresolved conflict of a merge into a workspace. Each side
-- names a checkpoint (state), the path there and the BLAKE3 of what the
-- path held ('' for nothing, a directory, a symbolic link's target hash).
CREATE TABLE merge_conflicts (
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    path          TEXT NOT NULL,
    kind          TEXT NOT NULL,
    detail        TEXT NOT NULL DEFAULT '',
    base_state    TEXT NOT NULL DEFAULT '',
    base_path     TEXT NOT NULL DEFAULT '',
    base_hash     TEXT NOT NULL DEFAULT '',
    ours_state    TEXT NOT NULL DEFAULT '',
    ours_path     TEXT NOT NULL DEFAULT '',
    ours_hash     TEXT NOT NULL DEFAULT '',
    theirs_state  TEXT NOT NULL DEFAULT '',
    theirs_path   TEXT NOT NULL DEFAULT '',
    theirs_hash   TEXT NOT NULL DEFAULT '',
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, path)
) WITHOUT ROWID;
