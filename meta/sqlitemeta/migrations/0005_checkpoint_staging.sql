-- 0005: a checkpoint is a tree root plus the staging delta its workspace had
-- when it was taken, so taking one copies at most a workspace's bounded
-- staging rows instead of folding them (cost independent of the tree's
-- size). The rows are folded into the checkpoint's root in the background
-- (FoldCheckpoint) and then deleted.
CREATE TABLE checkpoint_staging (
    checkpoint_id TEXT NOT NULL REFERENCES checkpoints (id) ON DELETE CASCADE,
    key           BLOB NOT NULL,
    value         BLOB,
    deleted       BOOLEAN NOT NULL DEFAULT FALSE,
    seq           BIGINT NOT NULL,
    PRIMARY KEY (checkpoint_id, key)
) WITHOUT ROWID;
