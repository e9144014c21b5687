-- 0012: pruning a workspace's history at every recorded state scanned all
-- of its states (up to the 10,000 a default policy keeps), so each audited
-- call and each change through a FUSE mount slowed as history grew. A
-- state now carries its ordinal in its workspace's history (ord), so the
-- count rule deletes a range of an index, and the age rule has an index
-- of its own.
ALTER TABLE audit_states ADD COLUMN ord BIGINT NOT NULL DEFAULT 0;
UPDATE audit_states SET ord = numbered.ord
FROM (SELECT seq, ROW_NUMBER() OVER (PARTITION BY workspace_id ORDER BY seq) AS ord FROM audit_states) AS numbered
WHERE numbered.seq = audit_states.seq;
CREATE INDEX audit_states_by_ord ON audit_states (workspace_id, ord);
CREATE INDEX audit_states_by_age ON audit_states (workspace_id, at);
