package tools

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/provider"
)

// TestDescribeSanitizes: no rendered error names a host path or leaks a
// database message, whatever wraps it.
func TestDescribeSanitizes(t *testing.T) {
	hostErr := &fs.PathError{Op: "open", Path: "/srv/forkspace/blobs/ab/cd", Err: syscall.EIO}
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("resolve checkpoint x: %w: %w", fs.ErrNotExist, sql.ErrNoRows), "write failed: resolve checkpoint x: file does not exist"},
		{fmt.Errorf("put blob: %w", &fs.PathError{Op: "write", Path: "/srv/forkspace/tmp/1", Err: syscall.ENOSPC}), "out of disk space"},
		{errors.Join(fmt.Errorf("put blob: %w", syscall.ENOSPC), fmt.Errorf("%w: record audit entry write: %w", audit.ErrNotRecorded, hostErr)),
			"write failed: the store is out of disk space; nothing more can be written until space is freed (the call was not recorded in the audit log)"},
		{fmt.Errorf("read chunk: %w", hostErr), "write failed: read chunk: open <host path>: input/output error"},
		{&provider.FailedError{Err: hostErr}, "the workspace is unavailable: open <host path>"},
		{errors.New(strings.Repeat("x", 5000)), "…"},
	} {
		got := describe("write", c.err)
		if !strings.Contains(got, c.want) || strings.Contains(got, "/srv") || strings.Contains(got, "sql:") ||
			strings.Contains(got, "record audit entry") || len(got) > 600 {
			t.Errorf("describe(%v) = %q, want it to contain %q and no internals", c.err, got, c.want)
		}
	}
}
