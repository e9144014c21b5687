package s3client

import (
	"context"
	"errors"
	"io/fs"
	"slices"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/forkspace/forkspace/errdefs"
)

// ErrUnreachable means the endpoint could not be reached at all
// (connection refused, DNS failure, timeout): no S3 answer was received.
// It is distinct from fs.ErrNotExist and fs.ErrPermission, which are S3's
// answers.
var ErrUnreachable = errors.New("s3 endpoint unreachable")

// apiCodes maps S3 error codes to the sentinels callers test for.
var apiCodes = map[string]error{
	"NoSuchKey":             fs.ErrNotExist,
	"NotFound":              fs.ErrNotExist,
	"NoSuchBucket":          fs.ErrNotExist,
	"AccessDenied":          fs.ErrPermission,
	"AllAccessDisabled":     fs.ErrPermission,
	"InvalidAccessKeyId":    fs.ErrPermission,
	"SignatureDoesNotMatch": fs.ErrPermission,
	"ExpiredToken":          fs.ErrPermission,
	"InvalidToken":          fs.ErrPermission,
	"Forbidden":             fs.ErrPermission,
	"PreconditionFailed":    errdefs.ErrConflict,
	// versitygw answers an unknown access key with 404 XAdminUserNotFound.
	"XAdminUserNotFound": fs.ErrPermission,
}

// IsCode reports whether err is an S3 error with one of codes.
func IsCode(err error, codes ...string) bool {
	var api smithy.APIError
	return errors.As(err, &api) && slices.Contains(codes, api.ErrorCode())
}

// Status is the HTTP status of the S3 answer err carries, or 0.
func Status(err error) int {
	var resp *awshttp.ResponseError
	if errors.As(err, &resp) {
		return resp.HTTPStatusCode()
	}
	return 0
}

// httpStatuses maps the status of an error without a known code.
var httpStatuses = map[int]error{
	404: fs.ErrNotExist,
	403: fs.ErrPermission,
	401: fs.ErrPermission,
	412: errdefs.ErrConflict,
}

// Classify returns the sentinel for an SDK error, or nil (also for a
// canceled or expired context, which the SDK reports as a failed send;
// a request's own timeout is ErrUnreachable).
func Classify(err error) error {
	if errors.Is(err, ErrUnreachable) {
		return ErrUnreachable
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		if s, ok := apiCodes[api.ErrorCode()]; ok {
			return s
		}
	}
	if s, ok := httpStatuses[Status(err)]; ok {
		return s
	}
	var send *smithyhttp.RequestSendError
	if errors.As(err, &send) {
		return ErrUnreachable
	}
	return nil
}
