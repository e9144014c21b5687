package s3mount

import (
	"errors"
	"net/url"
	"strconv"

	"github.com/forkspace/forkspace/internal/s3client"
	"github.com/forkspace/forkspace/mount"
)

// Scheme is the mount URL scheme this package serves.
const Scheme = s3client.Scheme

// New builds a Mount from a mount URL
//
//	s3://BUCKET[/PREFIX][?endpoint=URL&region=R&path_style=true&page_size=N&max_attempts=N&timeout=D]
//
// The common mount parameters (mode, ignore, …) were already read into
// opts and removed from u by mount.ParseURL. Credentials come from the
// environment (see Options.Credentials); a URL carrying credentials
// anywhere (user information, also in the endpoint, or a secret-looking
// parameter) is rejected, so a mount URL is safe to persist. A read-only opts.Mode makes
// the mount refuse writes. Errors wrap fs.ErrInvalid and name the
// offending part.
func New(u *url.URL, opts mount.Options) (mount.Mount, error) {
	o, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	o.ReadOnly = opts.Mode != mount.ReadWrite
	return Open(o)
}

// parseURL reads Options from a mount URL (s3client.ParseURL, plus
// page_size).
func parseURL(u *url.URL) (Options, error) {
	var pageSize int32
	r, err := s3client.ParseURL(u, "s3 mount url", map[string]func(string) error{
		"page_size": func(v string) error {
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n < 1 {
				return errors.New("not a positive integer")
			}
			pageSize = int32(n)
			return nil
		},
	})
	if err != nil {
		return Options{}, err
	}
	return Options{
		Bucket: r.Bucket, Prefix: r.Prefix, Region: r.Config.Region, Endpoint: r.Config.Endpoint,
		PathStyle: r.Config.PathStyle, PageSize: pageSize, MaxAttempts: r.Config.MaxAttempts, Timeout: r.Timeout,
	}, nil
}
