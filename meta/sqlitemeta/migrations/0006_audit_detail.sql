-- 0006: what a call reported besides its error (for exec: how it ended
-- and what it used), '' when nothing.

ALTER TABLE audit_log ADD COLUMN detail TEXT NOT NULL DEFAULT '';
