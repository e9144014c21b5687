package nearname

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"
)

// Lister lists a directory of a workspace tree (vfs.FS does).
type Lister interface {
	ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error)
}

// Hint is what Find learned about a missing path.
type Hint struct {
	// Near is the existing path closest to the one asked for ("" if none
	// is close).
	Near string
	// MissingDir is, when Near is "", the directory of the path that does
	// not exist either ("" if it does).
	MissingDir string
}

// maxName bounds the names compared: past it a name is too long to be a
// near miss worth the cost of an edit distance.
const maxName = 800

// Find looks for the entry of p's parent closest to p's base name; when
// the parent is missing too, for a near miss of the parent in turn, and
// failing that names the topmost missing directory.
func Find(ctx context.Context, fsys Lister, p string) Hint {
	if fsys == nil || p == "." || p == "" {
		return Hint{}
	}
	dir, base := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "."
	}
	entries, err := fsys.ReadDir(ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		if h := Find(ctx, fsys, dir); h != (Hint{}) {
			return h // a near miss of the directory, or a missing ancestor
		}
		return Hint{MissingDir: dir}
	}
	if err != nil {
		return Hint{}
	}
	best, bestDist := "", len(base)/3+2
	for _, e := range entries {
		if e.Name() == base {
			// The entry exists and p failed for another reason (a
			// dangling symbolic link): another name is no better.
			return Hint{}
		}
		if d := Distance(base, e.Name()); d < bestDist {
			best, bestDist = e.Name(), d
		}
	}
	if best == "" {
		return Hint{}
	}
	return Hint{Near: path.Join(dir, best)}
}

// Distance is how far name is from what a caller who typed base may have
// meant: the case-insensitive edit distance, or 1 when name is base with
// an extension ("calc" for "calc.py") or base without one.
func Distance(base, name string) int {
	b, n := strings.ToLower(base), strings.ToLower(name)
	if b == n {
		return 0
	}
	if stem(n) == b || stem(b) == n {
		return 1
	}
	if len(b) > maxName || len(n) > maxName {
		return len(b) + len(n)
	}
	return levenshtein(b, n)
}

// stem is name without its last extension.
func stem(name string) string {
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		return name[:i]
	}
	return name
}

// levenshtein is the edit distance of a and b (bytes).
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
