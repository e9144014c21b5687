package gitmount

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strconv"
	"strings"

	"github.com/forkspace/forkspace/mount"
)

// Schemes are the mount URL schemes New serves.
var Schemes = []string{"git+https", "git+http", "git+file", "github"}

// New builds a Mount from a mount URL:
//
//	git+https://host/repo.git#REF:SUBDIR   (also git+http)
//	git+file:///path/to/repo.git#REF       (opened in place)
//	github://OWNER/REPO#REF:SUBDIR          (https://github.com/OWNER/REPO.git)
//
// REF and :SUBDIR are optional ("#:docs" is HEAD's docs). The only query
// parameter is shallow (default true; false fetches the whole history); the
// common mount options were already read into opts by the caller. The token
// comes from the environment (see Options). A read-write opts.Mode is
// errors.ErrUnsupported: git mounts are read-only. Other errors wrap
// fs.ErrInvalid.
func New(u *url.URL, opts mount.Options) (mount.Mount, error) {
	if opts.Mode == mount.ReadWrite {
		return nil, fmt.Errorf("new git mount: read-write: %w (git mounts are read-only)", errors.ErrUnsupported)
	}
	o, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	return Open(o)
}

// parseURL reads Options from a mount URL.
func parseURL(u *url.URL) (Options, error) {
	bad := func(format string, args ...any) (Options, error) {
		return Options{}, fmt.Errorf("parse git mount url: %w: %s", fs.ErrInvalid, fmt.Sprintf(format, args...))
	}
	var o Options
	o.Ref, o.Subdir, _ = strings.Cut(u.Fragment, ":")
	repo := *u
	repo.Fragment, repo.RawFragment, repo.RawQuery = "", "", ""
	switch u.Scheme {
	case "git+https", "git+http", "git+file":
		repo.Scheme = strings.TrimPrefix(u.Scheme, "git+")
	case "github":
		owner, name := u.Host, strings.Trim(u.Path, "/")
		if owner == "" || name == "" || strings.Contains(name, "/") || u.User != nil {
			return bad("want github://OWNER/REPO, got %q", u.Redacted())
		}
		repo = url.URL{Scheme: "https", Host: "github.com", Path: "/" + owner + "/" + strings.TrimSuffix(name, ".git") + ".git"}
	default:
		return bad("scheme %q (known: %s)", u.Scheme, strings.Join(Schemes, ", "))
	}
	o.URL = repo.String()
	for k, vs := range u.Query() {
		switch k {
		case "shallow":
			b, err := strconv.ParseBool(vs[len(vs)-1])
			if err != nil {
				return bad("shallow %q is not a boolean", vs[len(vs)-1])
			}
			o.Full = !b
		default:
			return bad("unknown parameter %q (known: shallow)", k)
		}
	}
	return o, nil
}
