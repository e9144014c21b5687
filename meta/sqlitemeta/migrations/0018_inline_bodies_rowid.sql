-- 0018: inline_bodies goes back to a rowid table, with a unique index on
-- hash. 0016 made it a WITHOUT ROWID table, an index B-tree, whose cells
-- keep at most ~2 KiB of a row on its page (8 KiB pages): a larger body
-- overflows, and SQLite compares the key of an overflowing cell only
-- after reading its whole row, overflow pages included, so every lookup
-- read the bodies of the cells it passed on its way down. A rowid table
-- keeps rows of up to ~8 KiB on their leaf page and the index holds only
-- hashes: a lookup compares 32-byte keys, then reads the one body (one
-- more page for a small body's create than 0016, and a read of an 8-12
-- KiB body 1.8-2.8x faster, bulk writes of them 2x: docs/benchmarks.md,
-- issue 9 goal 6).
CREATE TABLE inline_bodies_rowid (
    hash       BLOB NOT NULL UNIQUE,
    data       BLOB NOT NULL,
    created_at BIGINT NOT NULL,
    touched_at BIGINT NOT NULL DEFAULT 0
);

INSERT INTO inline_bodies_rowid (hash, data, created_at, touched_at)
    SELECT hash, data, created_at, touched_at FROM inline_bodies;
DROP TABLE inline_bodies;
ALTER TABLE inline_bodies_rowid RENAME TO inline_bodies;
