package urlcreds

import (
	"fmt"
	"io/fs"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// hint is how the user should pass credentials instead.
const hint = "set them there (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for S3, GIT_TOKEN or GITHUB_TOKEN for git)"

// secretWords mark query parameters that carry secrets.
var secretWords = []string{"token", "secret", "password", "key", "signature", "credential"}

// SecretName reports whether a query parameter named name looks like it
// carries a secret.
func SecretName(name string) bool {
	n := strings.ToLower(name)
	return slices.ContainsFunc(secretWords, func(w string) bool { return strings.Contains(n, w) })
}

// maxDepth bounds how deep URLs nested in query values are searched.
const maxDepth = 4

// Check returns nil when raw carries no credentials, else an error
// wrapping fs.ErrInvalid that says where they are and to use the
// environment. A raw that does not parse is left to the caller's parser.
func Check(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	if where := find(u, "", maxDepth); where != "" {
		return fmt.Errorf("%w: credentials in the url (%s) are not allowed, use the environment: %s", fs.ErrInvalid, where, hint)
	}
	return nil
}

// find names the first place in u holding credentials, or "".
func find(u *url.URL, in string, depth int) string {
	at := func(what string) string {
		if in == "" {
			return what
		}
		return what + " of parameter " + in
	}
	if u.User != nil {
		return at("user information")
	}
	if depth == 0 {
		return ""
	}
	q := u.Query()
	for _, k := range sortedKeys(q) {
		if SecretName(k) {
			return at(fmt.Sprintf("parameter %q", k))
		}
		for _, v := range q[k] {
			if n, ok := nested(v); ok {
				if w := find(n, fmt.Sprintf("%q", k), depth-1); w != "" {
					return w
				}
			}
		}
	}
	if n, ok := nested(u.Fragment); ok {
		if w := find(n, "fragment", depth-1); w != "" {
			return w
		}
	}
	return ""
}

// nested parses v as a URL when it looks like one with an authority.
func nested(v string) (*url.URL, bool) {
	if !strings.Contains(v, "://") {
		return nil, false
	}
	n, err := url.Parse(strings.TrimSpace(v))
	return n, err == nil
}

func sortedKeys(q url.Values) []string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Redact returns raw without the credentials Check finds: user
// information dropped at every depth, secret-looking parameters removed.
// Parameters are re-encoded in key order. An unparsable raw yields
// "(unparsable url)".
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable url)"
	}
	return redact(u, maxDepth).String()
}

func redact(u *url.URL, depth int) *url.URL {
	r := *u
	r.User = nil
	if depth == 0 {
		return &r
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k, vs := range q {
			if SecretName(k) {
				q.Del(k)
				continue
			}
			for i, v := range vs {
				if n, ok := nested(v); ok {
					vs[i] = redact(n, depth-1).String()
				}
			}
		}
		r.RawQuery = q.Encode()
	}
	if n, ok := nested(u.Fragment); ok {
		r.Fragment, r.RawFragment = redact(n, depth-1).String(), ""
	}
	return &r
}
