package s3blob

import (
	"fmt"
	"io/fs"
	"net/url"

	"github.com/forkspace/forkspace/internal/s3client"
)

// ParseURL reads Options from a blob store URL
//
//	s3://BUCKET[/PREFIX][?endpoint=URL&region=R&path_style=BOOL&max_attempts=N&timeout=D]
//
// Credentials come from the environment: a URL carrying them anywhere
// (user information, also inside the endpoint, or a secret-looking
// parameter) is refused with a message saying so. Errors wrap
// fs.ErrInvalid.
func ParseURL(raw string) (Options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Options{}, fmt.Errorf("parse blob store url: %w: %w", fs.ErrInvalid, err)
	}
	r, err := s3client.ParseURL(u, "blob store url", nil)
	if err != nil {
		return Options{}, err
	}
	return Options{
		Bucket: r.Bucket, Prefix: r.Prefix, Region: r.Config.Region, Endpoint: r.Config.Endpoint,
		PathStyle: r.Config.PathStyle, MaxAttempts: r.Config.MaxAttempts, Timeout: r.Timeout,
	}, nil
}

// OpenURL opens the store a URL names (ParseURL, then Open).
func OpenURL(raw string) (*Store, error) {
	o, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	return Open(o)
}
