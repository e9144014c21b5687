package mount

import (
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/forkspace/forkspace/internal/urlcreds"
)

// Driver builds a mount from a parsed source URL. The common options
// (mode, ignore, writeback, writebackms, maxbytes, maxentries) are already
// removed from u's query and given as opts.
type Driver func(u *url.URL, opts Options) (Mount, error)

// Drivers maps URL schemes ("s3", "git+https", "file", "bundle+https") to
// drivers. The CLI wires the built-in ones explicitly.
type Drivers map[string]Driver

// commonKeys are the query parameters ParseURL turns into Options.
var commonKeys = []string{"mode", "ignore", "writeback", "writebackms", "maxbytes", "maxentries"}

// ParseSpec parses "ROOT=URL" (the CLI's --mount argument) into a Spec
// with ParseURL.
func ParseSpec(arg string, drivers Drivers) (Spec, error) {
	root, raw, ok := strings.Cut(arg, "=")
	if !ok {
		return Spec{}, fmt.Errorf("parse mount %q: %w: want ROOT=URL", arg, fs.ErrInvalid)
	}
	m, opts, source, err := ParseURL(raw, drivers)
	if err != nil {
		return Spec{}, err
	}
	if err := checkRoot(root); err != nil {
		return Spec{}, err
	}
	return Spec{Root: root, Mount: m, Options: opts, Source: source}, nil
}

// ParseURL builds a mount from a source URL. The query parameters mode
// (ro, rw, read-only, read-write), ignore (comma-separated segments),
// writeback (debounce, manual), writebackms, maxbytes and maxentries become
// Options; the rest reaches the driver. A URL carrying credentials (user
// information anywhere, also inside a parameter such as an S3 endpoint, or
// a parameter named like a secret: see internal/urlcreds) is refused with
// fs.ErrInvalid and a message saying to use the environment, so the
// source it returns, the URL to persist, never holds a secret. An unknown
// scheme's error lists the known ones; errors wrap fs.ErrInvalid (or the
// driver's error).
func ParseURL(raw string, drivers Drivers) (m Mount, opts Options, source string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, Options{}, "", fmt.Errorf("parse mount url: %w: %w", fs.ErrInvalid, err)
	}
	if err := urlcreds.Check(raw); err != nil {
		return nil, Options{}, "", fmt.Errorf("parse mount url %s: %w", Redact(raw), err)
	}
	d, ok := drivers[u.Scheme]
	if !ok {
		known := slices.Sorted(maps.Keys(drivers))
		return nil, Options{}, "", fmt.Errorf("parse mount url %s: %w: unknown scheme %q (known: %s)", Redact(raw), fs.ErrInvalid, u.Scheme, strings.Join(known, ", "))
	}
	q := u.Query()
	if opts, err = parseOptions(q); err != nil {
		return nil, Options{}, "", fmt.Errorf("parse mount url %s: %w", Redact(raw), err)
	}
	for _, k := range commonKeys {
		q.Del(k)
	}
	du := *u
	du.RawQuery = q.Encode()
	if m, err = d(&du, opts); err != nil {
		return nil, Options{}, "", fmt.Errorf("parse mount url %s: %w", Redact(raw), err)
	}
	return m, opts, Redact(raw), nil
}

func parseOptions(q url.Values) (Options, error) {
	var o Options
	switch v := q.Get("mode"); v {
	case "", "ro", string(ReadOnly):
		o.Mode = ReadOnly
	case "rw", string(ReadWrite):
		o.Mode = ReadWrite
	default:
		return o, fmt.Errorf("%w: mode %q (want ro or rw)", fs.ErrInvalid, v)
	}
	if v := q.Get("ignore"); v != "" {
		o.Ignore = strings.Split(v, ",")
	}
	o.WriteBack = WriteBack(q.Get("writeback"))
	ints := []struct {
		key string
		dst *int64
	}{{"maxbytes", &o.MaxBytes}, {"maxentries", &o.MaxEntries}}
	for _, p := range ints {
		if v := q.Get(p.key); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return o, fmt.Errorf("%w: %s %q", fs.ErrInvalid, p.key, v)
			}
			*p.dst = n
		}
	}
	if v := q.Get("writebackms"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return o, fmt.Errorf("%w: writebackms %q", fs.ErrInvalid, v)
		}
		o.WriteBackMs = n
	}
	return o.WithDefaults()
}

// Redact returns raw without credentials (urlcreds.Redact), for messages;
// an unparsable raw yields "(unparsable url)".
func Redact(raw string) string { return urlcreds.Redact(raw) }
