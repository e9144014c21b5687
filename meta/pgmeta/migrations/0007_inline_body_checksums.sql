-- 0007: each inline body carries the CRC-32C of its bytes, written with
-- it. Bulk readers (grep, export) check a body against it instead of
-- hashing it again with BLAKE3 (docs/decisions/034-inline-body-checksums.md).
-- Rows written before keep crc NULL: their readers verify them against
-- their hash, and a put of the same body fills it in.
ALTER TABLE inline_bodies ADD COLUMN crc BIGINT;
