package s3client

import (
	"context"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// DefaultRegion is the signing region when neither Config nor the
// environment names one.
const DefaultRegion = "us-east-1"

// Config describes a client. The zero value of each field means the
// default.
type Config struct {
	// Region defaults to AWS_REGION, then AWS_DEFAULT_REGION, then
	// DefaultRegion. Cloudflare R2 takes "auto".
	Region string
	// Endpoint is the base URL of a non-AWS server
	// ("http://127.0.0.1:9000", "https://<account>.r2.cloudflarestorage.com").
	Endpoint string
	// PathStyle addresses the bucket in the path (endpoint/bucket/key)
	// instead of the host name (bucket.endpoint/key).
	PathStyle bool
	// Credentials default to the environment.
	Credentials *Credentials
	// MaxAttempts bounds the attempts of one request, retries included
	// (default: the SDK's, 3).
	MaxAttempts int
	// MaxBackoff bounds the wait between two attempts (default: the SDK's,
	// 20s).
	MaxBackoff time.Duration
	// HTTPClient defaults to the SDK's.
	HTTPClient *http.Client
}

// Credentials sign requests. They are held in memory only.
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
}

// String hides the secret parts, so a Credentials value that ends up in a
// log or an error message leaks nothing.
func (c Credentials) String() string {
	return "Credentials{AccessKeyID: " + c.AccessKeyID + ", SecretAccessKey: <redacted>}"
}

// GoString hides the secret parts from %#v too.
func (c Credentials) GoString() string { return c.String() }

// New builds a client for c (see the package documentation). It does not
// contact the server.
func New(c Config) *s3.Client {
	region := c.Region
	if region == "" {
		region = envRegion()
	}
	if region == "" {
		region = DefaultRegion
	}
	creds := c.Credentials
	if creds == nil {
		creds = envCredentials()
	}
	cfg := aws.Config{
		Region:                     region,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.RateLimiter = ratelimit.None
				if c.MaxAttempts > 0 {
					o.MaxAttempts = c.MaxAttempts
				}
				if c.MaxBackoff > 0 {
					o.MaxBackoff = c.MaxBackoff
				}
			})
		},
	}
	if creds != nil {
		ac := aws.Credentials{
			AccessKeyID:     creds.AccessKeyID,
			SecretAccessKey: creds.SecretAccessKey,
			SessionToken:    creds.SessionToken,
			Source:          "forkspace",
		}
		cfg.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return ac, nil })
	}
	if c.HTTPClient != nil {
		cfg.HTTPClient = c.HTTPClient
	}
	return s3.NewFromConfig(cfg, func(so *s3.Options) {
		so.UsePathStyle = c.PathStyle
		if c.Endpoint != "" {
			so.BaseEndpoint = aws.String(c.Endpoint)
		}
	})
}

// envCredentials reads AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN; nil when no access key is set (anonymous requests).
func envCredentials() *Credentials {
	id := os.Getenv("AWS_ACCESS_KEY_ID")
	if id == "" {
		return nil
	}
	return &Credentials{
		AccessKeyID:     id,
		SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken:    os.Getenv("AWS_SESSION_TOKEN"),
	}
}

// envRegion reads AWS_REGION, then AWS_DEFAULT_REGION.
func envRegion() string {
	if r := os.Getenv("AWS_REGION"); r != "" {
		return r
	}
	return os.Getenv("AWS_DEFAULT_REGION")
}
