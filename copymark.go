package forkspace

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// settingCopySource marks the destination of a store copy (package
// storecopy) from its start; the copy's last transaction writes the
// format settings.
const settingCopySource = "copy_source"

// checkNotCopying refuses to open a database that holds an unfinished
// copy (marked, without the format settings the copy writes last): the
// copy's rerun completes it.
func checkNotCopying(tx meta.Tx) error {
	from, err := tx.Setting(settingCopySource)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := tx.Setting(settingFormat); !errors.Is(err, fs.ErrNotExist) {
		return err // a finished copy, or a failed read
	}
	return fmt.Errorf("%w: it holds an unfinished copy of %s (rerun 'forkspace store copy' to complete it)", errdefs.ErrNotEmpty, from)
}
