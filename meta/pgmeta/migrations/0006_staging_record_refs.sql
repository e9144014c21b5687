-- 0006: a fork's first staging record may refer to its parent's records
-- instead of holding their rows (docs/decisions/028-forks-refer-to-records.md).
-- A reference record names a range (ref_base, ref_ver] of workspace
-- ref_ws's records, read in its place (its body is an empty delta); the
-- index finds the references to a workspace's records, which its pruning
-- keeps and its deletion writes out into the referring records. Existing
-- records hold their rows (ref_ws NULL) and read as before.
ALTER TABLE staging_records ADD COLUMN ref_ws TEXT COLLATE "C";
ALTER TABLE staging_records ADD COLUMN ref_base BIGINT;
ALTER TABLE staging_records ADD COLUMN ref_ver BIGINT;
CREATE INDEX staging_records_by_ref ON staging_records (ref_ws, ref_base) WHERE ref_ws IS NOT NULL;

-- Pruning a workspace's records reads the least base of the checkpoints
-- referring to them; without an index that read scanned every unfolded
-- checkpoint's delta, a fork's most expensive statement once thousands of
-- forks' base checkpoints awaited the folder.
CREATE INDEX checkpoint_deltas_by_workspace ON checkpoint_deltas (workspace_id, base) WHERE workspace_id IS NOT NULL;
