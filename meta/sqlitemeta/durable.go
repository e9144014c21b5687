package sqlitemeta

import (
	"context"
	"fmt"
	"os"
)

// Sync makes every transaction committed before the call survive a power
// loss: it fsyncs the WAL file, where committed transactions are until a
// checkpoint copies them into the database (a checkpoint fsyncs the WAL
// before and the database after copying, so what it took is durable
// already). It implements meta.Syncer.
func (s *Store) Sync(ctx context.Context) error {
	if err := s.startRead("sync"); err != nil {
		return err
	}
	defer s.reading.Done()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sync metadata %s: %w", s.path, err)
	}
	f, err := os.Open(s.path + "-wal")
	if os.IsNotExist(err) {
		return nil // no WAL: everything committed is in the database file
	}
	if err == nil {
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("sync metadata %s: %w", s.path, err)
	}
	return nil
}
