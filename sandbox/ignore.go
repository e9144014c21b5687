package sandbox

import (
	"path"
	"strings"
)

// DefaultIgnore are the paths not pulled back when Options.Ignore is nil:
// caches that tools write under HOME (which is the work dir) or next to
// sources, which are large, rebuilt at will and worthless in history.
var DefaultIgnore = []string{".cache", "**/node_modules/.cache", "**/__pycache__"}

// matcher decides which workspace paths are ignored. A pattern is a
// path.Match pattern over a whole slash-separated path from the workspace
// root ("build/*.o"); a leading "**/" lets it match at any depth
// ("**/__pycache__"). A path is ignored when it or one of its ancestors
// matches.
type matcher struct {
	anchored []string
	anywhere [][]string // split patterns that follow "**/"
}

func newMatcher(patterns []string) *matcher {
	m := &matcher{}
	for _, p := range patterns {
		if rest, ok := strings.CutPrefix(p, "**/"); ok {
			m.anywhere = append(m.anywhere, strings.Split(rest, "/"))
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
	if len(m.anywhere) == 0 {
		return false
	}
	segs := strings.Split(p, "/")
	for _, pat := range m.anywhere {
		if len(pat) > len(segs) {
			continue
		}
		if ok, _ := path.Match(strings.Join(pat, "/"), strings.Join(segs[len(segs)-len(pat):], "/")); ok {
			return true
		}
	}
	return false
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
