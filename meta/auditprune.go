package meta

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/forkspace/forkspace/errdefs"
)

// AuditPrunedMark reads the mark of AuditPrunedSetting from tx (0 when
// the log was never pruned), for drivers implementing AuditPruned.
func AuditPrunedMark(tx interface{ Setting(string) (string, error) }) (int64, error) {
	v, err := tx.Setting(AuditPrunedSetting)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("setting %s: %w: %w", AuditPrunedSetting, errdefs.ErrCorrupt, err)
	}
	return n, nil
}
