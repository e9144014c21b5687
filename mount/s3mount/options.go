package s3mount

import (
	"net/http"
	"time"

	"github.com/forkspace/forkspace/internal/s3client"
)

// DefaultRegion is the signing region when neither Options nor the
// environment names one.
const DefaultRegion = s3client.DefaultRegion

// DefaultTimeout bounds one request when Options.Timeout is zero.
const DefaultTimeout = 2 * time.Minute

// Options configure a Mount. The zero value of each field means the default.
type Options struct {
	// Bucket is required.
	Bucket string
	// Prefix is stripped from keys to form relative paths; leading and
	// trailing slashes are ignored ("a", "a/" and "/a/" are the same).
	Prefix string
	// Region defaults to AWS_REGION, then AWS_DEFAULT_REGION, then
	// DefaultRegion. Cloudflare R2 takes "auto".
	Region string
	// Endpoint is the base URL of a non-AWS server
	// ("http://127.0.0.1:9000", "https://<account>.r2.cloudflarestorage.com").
	Endpoint string
	// PathStyle addresses the bucket in the path (endpoint/bucket/key)
	// instead of the host name (bucket.endpoint/key).
	PathStyle bool
	// Credentials default to the environment; see Credentials.
	Credentials *Credentials
	// PageSize is the ListObjectsV2 max-keys (default: the server's, 1000
	// on S3).
	PageSize int32
	// MaxAttempts bounds the attempts of one request, retries included
	// (default: the SDK's, 3).
	MaxAttempts int
	// Timeout bounds each request, body included (default DefaultTimeout):
	// a server that stops answering fails the request with
	// ErrUnreachable instead of hanging it.
	Timeout time.Duration
	// ReadOnly makes Put and Delete fail with errdefs.ErrReadOnly.
	ReadOnly bool
	// HTTPClient defaults to the SDK's.
	HTTPClient *http.Client
}

// Credentials sign requests. They are held in memory only, and hide
// their secret from %v.
type Credentials = s3client.Credentials
