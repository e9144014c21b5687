package tmpfile

import (
	"errors"
	"os"
)

// Unlinked creates a file in the default temporary directory, named after
// pattern as os.CreateTemp names it, and removes its name at once: the
// file lives as long as the returned descriptor, and a crash leaves
// nothing behind.
func Unlinked(pattern string) (*os.File, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return f, nil
}
