package fusefs

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
)

// TestErrnoUnwraps: every sentinel is found however deeply it is wrapped
// (go-fuse's ToErrno would see EIO), and an unknown error is EIO,
// reported as unknown so it gets logged.
func TestErrnoUnwraps(t *testing.T) {
	for _, e := range errnos {
		err := &fs.PathError{Op: "op", Path: "p", Err: fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", e.err))}
		if got, known := errno(err); got != e.errno || !known {
			t.Errorf("errno(%v) = %v, %v; want %v", err, got, known, e.errno)
		}
	}
	if got, known := errno(errors.New("odd")); got != syscall.EIO || known {
		t.Errorf("unknown error: %v, %v", got, known)
	}
	if got, _ := errno(fmt.Errorf("x: %w", syscall.ENOSPC)); got != syscall.ENOSPC {
		t.Errorf("a wrapped errno: %v", got)
	}
	if got, known := errno(nil); got != 0 || !known {
		t.Errorf("nil: %v", got)
	}
}
