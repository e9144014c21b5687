package sandbox

import (
	"path"
	"strings"
)

// DefaultIgnore are the paths not pulled back when Options.Ignore is nil:
// caches that tools write in the workspace (XDG_CACHE_HOME pointed
// there, or next to sources), which are large, rebuilt at will and worthless in history.
var DefaultIgnore = []string{".cache", "**/node_modules/.cache", "**/__pycache__"}

// matcher decides which workspace paths are ignored. A pattern is a
// path.Match pattern over a whole slash-separated path from the workspace
// root ("build/*.o"); a leading "**/" lets it match at any depth
// ("**/__pycache__"). A path is ignored when it or one of its ancestors
// matches.
type matcher struct {
	anchored []string
	// anywhere are the patterns that followed "**/", with how many path
	// segments each spans.
	anywhere []suffixPattern
}

type suffixPattern struct {
	pattern  string
	segments int
}

func newMatcher(patterns []string) *matcher {
	m := &matcher{}
	for _, p := range patterns {
		if rest, ok := strings.CutPrefix(p, "**/"); ok {
			m.anywhere = append(m.anywhere, suffixPattern{rest, strings.Count(rest, "/") + 1})
		} else {
			m.anchored = append(m.anchored, strings.Trim(p, "/"))
		}
	}
	return m
}

// self reports whether p itself matches (walks that skip ignored
// directories need no more).
func (m *matcher) self(p string) bool {
	for _, pat := range m.anchored {
		if ok, _ := path.Match(pat, p); ok {
			return true
		}
	}
	for _, pat := range m.anywhere {
		if tail, ok := lastSegments(p, pat.segments); ok {
			if ok, _ := path.Match(pat.pattern, tail); ok {
				return true
			}
		}
	}
	return false
}

// lastSegments returns the last n slash-separated segments of p (false if
// p has fewer).
func lastSegments(p string, n int) (string, bool) {
	i := len(p)
	for ; n > 0; n-- {
		if i < 0 {
			return "", false
		}
		i = strings.LastIndexByte(p[:i], '/')
	}
	return p[i+1:], true
}

// match reports whether p or one of its ancestors matches.
func (m *matcher) match(p string) bool {
	for ; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		if m.self(p) {
			return true
		}
	}
	return false
}

// under reports whether p is prefix or lies beneath it.
func under(p, prefix string) bool {
	prefix = strings.Trim(prefix, "/")
	return prefix == "" || prefix == "." || p == prefix || strings.HasPrefix(p, prefix+"/")
}
