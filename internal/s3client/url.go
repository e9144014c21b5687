package s3client

import (
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/forkspace/forkspace/internal/urlcreds"
)

// Scheme is the URL scheme of S3 locations.
const Scheme = "s3"

// URL is what an S3 URL says.
type URL struct {
	Bucket string
	// Prefix is the URL's path, as written ("/a/b/"; "" for none).
	Prefix string
	Config Config
	// Timeout is the timeout parameter (0: not given).
	Timeout time.Duration
}

// ParseURL reads an S3 URL
//
//	s3://BUCKET[/PREFIX][?endpoint=URL&region=R&path_style=BOOL&max_attempts=N&timeout=D]
//
// for what ("s3 mount url", "blob store url"). Parameters in extra are
// the caller's own, each handed its value. A URL carrying credentials
// anywhere (urlcreds.Check) is refused: they come from the environment.
// Errors wrap fs.ErrInvalid and name the offending part, never a secret.
func ParseURL(u *url.URL, what string, extra map[string]func(string) error) (URL, error) {
	bad := func(format string, args ...any) (URL, error) {
		return URL{}, fmt.Errorf("parse %s: %w: %s", what, fs.ErrInvalid, fmt.Sprintf(format, args...))
	}
	if u.Scheme != Scheme {
		return bad("scheme %q is not %q", u.Scheme, Scheme)
	}
	if err := urlcreds.Check(u.String()); err != nil {
		return URL{}, fmt.Errorf("parse %s: %w", what, err)
	}
	if u.Host == "" {
		return bad("missing bucket (s3://BUCKET/PREFIX)")
	}
	r := URL{Bucket: u.Host, Prefix: u.Path}
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		switch k {
		case "endpoint":
			e, err := url.Parse(v)
			if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
				return bad("endpoint %q is not an http(s) URL", v)
			}
			r.Config.Endpoint = v
		case "region":
			r.Config.Region = v
		case "path_style":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return bad("path_style %q is not a boolean", v)
			}
			r.Config.PathStyle = b
		case "max_attempts":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return bad("max_attempts %q is not a positive integer", v)
			}
			r.Config.MaxAttempts = n
		case "timeout":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return bad("timeout %q is not a positive duration (\"30s\")", v)
			}
			r.Timeout = d
		default:
			set, ok := extra[k]
			if !ok {
				known := slices.Sorted(slices.Values(append([]string{"endpoint", "region", "path_style", "max_attempts", "timeout"}, slices.Collect(maps.Keys(extra))...)))
				return bad("unknown parameter %q (known: %s)", k, strings.Join(known, ", "))
			}
			if err := set(v); err != nil {
				return bad("%s %q: %v", k, v, err)
			}
		}
	}
	return r, nil
}
