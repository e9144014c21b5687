package sqlitemeta

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/forkspace/forkspace/errdefs"
)

// headerSize is the length of the database header at the start of page 1.
const headerSize = 100

// headerMagic opens every SQLite database file.
var headerMagic = []byte("SQLite format 3\x00")

// checkHeader refuses, with errdefs.ErrCorrupt, a file at path that cannot
// be a whole SQLite database, reading its 100-byte header and size only: no
// magic string, a page size that is not a power of two from 512 to 65536,
// a size that is not a whole number of pages (SQLite writes whole pages and
// does not notice a cut into the last one), or fewer pages than the header
// records (a truncated file). The page count is compared only when the
// header vouches for it (its change counter matches its version-valid-for
// number) and no write-ahead log holds newer pages; the header is read
// before the size so that a concurrent checkpoint, which only grows the
// file, cannot make a sound file look short. A missing or empty file is a
// new database and passes.
func checkHeader(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check header: %w", err)
	}
	defer f.Close()
	var h [headerSize]byte
	n, err := io.ReadFull(f, h[:])
	if n == 0 && err == io.EOF {
		return nil
	}
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("check header: %w", err)
	}
	if n < headerSize || !bytes.Equal(h[:len(headerMagic)], headerMagic) {
		return fmt.Errorf("check header: %w: not an SQLite database", errdefs.ErrCorrupt)
	}
	page := int64(binary.BigEndian.Uint16(h[16:18]))
	if page == 1 {
		page = 65536
	}
	if page < 512 || page&(page-1) != 0 {
		return fmt.Errorf("check header: %w: page size %d", errdefs.ErrCorrupt, page)
	}
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("check header: %w", err)
	}
	if fi.Size()%page != 0 {
		return fmt.Errorf("check header: %w: file size %d is not a multiple of the page size %d",
			errdefs.ErrCorrupt, fi.Size(), page)
	}
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	vouched := binary.BigEndian.Uint32(h[24:28]) == binary.BigEndian.Uint32(h[92:96])
	if vouched && fi.Size() < pages*page && !walHolds(path) {
		return fmt.Errorf("check header: %w: file has %d pages, its header records %d (truncated)",
			errdefs.ErrCorrupt, fi.Size()/page, pages)
	}
	return nil
}

// walHolds reports whether path's write-ahead log exists with content (or
// cannot be examined), in which case the main file may lag the database.
func walHolds(path string) bool {
	fi, err := os.Stat(path + "-wal")
	return !errors.Is(err, fs.ErrNotExist) && (err != nil || fi.Size() > 0)
}

// CheckIntegrity runs SQLite's quick integrity check over the whole file
// (every page of every table and index; about 50 ms per 64 MiB when
// cached) and returns errdefs.ErrCorrupt listing the first findings if
// there are any. It reads through the store's read pool beside other work;
// fsck calls it, Open does not (Open checks the header only).
func (s *Store) CheckIntegrity(ctx context.Context) error {
	if err := s.startRead("check integrity"); err != nil {
		return err
	}
	defer s.reading.Done()
	rows, err := s.read.QueryContext(ctx, "PRAGMA quick_check(20)")
	if err != nil {
		return fmt.Errorf("check integrity: %w", translate(err))
	}
	defer rows.Close()
	var findings []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("check integrity: %w", translate(err))
		}
		if line != "ok" {
			findings = append(findings, line)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check integrity: %w", translate(err))
	}
	if len(findings) > 0 {
		return fmt.Errorf("check integrity: %w: %s", errdefs.ErrCorrupt, strings.Join(findings, "; "))
	}
	return nil
}
