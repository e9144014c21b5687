-- 0013: a workspace's head generation. Processes sharing a store
-- (PostgreSQL) advance it in every transaction that changes the head's
-- state and check it in a fold, so a process whose in-memory mirror of the
-- head is out of date commits nothing (docs/decisions/023). SQLite stores
-- are opened by one process and leave it at 0; the column keeps the one
-- query layer both drivers share.
ALTER TABLE workspaces ADD COLUMN head_gen BIGINT NOT NULL DEFAULT 0;
