-- 0011: mount URLs carrying credentials are refused now (internal/urlcreds),
-- but earlier builds persisted the user information of an S3 endpoint
-- parameter ("s3://b?endpoint=http://AKID:SECRET@host") in clear: in the
-- mount table (settings 'mount.table.<workspace>') and in the index record
-- on each mount root (the xattr trusted.forkspace.mount, key
-- 'i' ino(8) 'x' name), staged and folded into trees, copied by every fork
-- and checkpoint. Remove it everywhere; the mounts read their credentials
-- from the environment again on reopen.
-- This file redacts the mount tables. Its Go half (scrubtrees.go), in the
-- same transaction, redacts the index records: in the staging tables with
-- the same function, and in tree nodes, which are content-addressed and
-- verified, by building those trees again.
-- secure_delete zeroes the old bytes instead of leaving them in free space.
PRAGMA secure_delete = ON;
UPDATE settings
SET value = forkspace_scrub_sources(value)
WHERE key LIKE 'mount.table.%'
  AND forkspace_scrub_sources(value) IS NOT value;

PRAGMA secure_delete = OFF;
