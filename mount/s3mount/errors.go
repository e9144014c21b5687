package s3mount

import (
	"fmt"
	"io/fs"

	"github.com/forkspace/forkspace/internal/s3client"
)

// ErrUnreachable means the endpoint could not be reached at all
// (connection refused, DNS failure, timeout): no S3 answer was received.
// It is distinct from fs.ErrNotExist and fs.ErrPermission, which are S3's
// answers.
var ErrUnreachable = s3client.ErrUnreachable

// wrap translates an SDK error at the boundary, keeping the cause:
// &fs.PathError{Op, Path, "<sentinel>: <cause>"}.
func wrap(op, path string, err error) error {
	return wrapAs(op, path, s3client.Classify(err), err)
}

// wrapAs is wrap with the sentinel already chosen (nil: none).
func wrapAs(op, path string, sentinel, err error) error {
	if sentinel != nil {
		err = fmt.Errorf("%w: %w", sentinel, err)
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}
