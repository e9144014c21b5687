package s3mount

import (
	"fmt"
	"io/fs"
	"net/url"
	"strconv"
	"time"

	"github.com/forkspace/forkspace/mount"
)

// Scheme is the mount URL scheme this package serves.
const Scheme = "s3"

// New builds a Mount from a mount URL
//
//	s3://BUCKET[/PREFIX][?endpoint=URL&region=R&path_style=true&page_size=N&max_attempts=N&timeout=D]
//
// The common mount parameters (mode, ignore, …) were already read into
// opts and removed from u by mount.ParseURL. Credentials come from the
// environment (see Options.Credentials); a URL with user information is
// rejected, so a mount URL is safe to persist. A read-only opts.Mode makes
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

// parseURL reads Options from a mount URL.
func parseURL(u *url.URL) (Options, error) {
	bad := func(format string, args ...any) (Options, error) {
		return Options{}, fmt.Errorf("parse s3 mount url: %w: %s", fs.ErrInvalid, fmt.Sprintf(format, args...))
	}
	if u.Scheme != Scheme {
		return bad("scheme %q is not %q", u.Scheme, Scheme)
	}
	if u.User != nil {
		return bad("credentials in the url are not allowed; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	if u.Host == "" {
		return bad("missing bucket (s3://BUCKET/PREFIX)")
	}
	o := Options{Bucket: u.Host, Prefix: u.Path}
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		switch {
		case k == "endpoint":
			e, err := url.Parse(v)
			if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
				return bad("endpoint %q is not an http(s) URL", v)
			}
			o.Endpoint = v
		case k == "region":
			o.Region = v
		case k == "path_style":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return bad("path_style %q is not a boolean", v)
			}
			o.PathStyle = b
		case k == "page_size":
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n < 1 {
				return bad("page_size %q is not a positive integer", v)
			}
			o.PageSize = int32(n)
		case k == "max_attempts":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return bad("max_attempts %q is not a positive integer", v)
			}
			o.MaxAttempts = n
		case k == "timeout":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return bad("timeout %q is not a positive duration (\"30s\")", v)
			}
			o.Timeout = d
		default:
			return bad("unknown parameter %q (known: endpoint, region, path_style, page_size, max_attempts, timeout)", k)
		}
	}
	return o, nil
}
