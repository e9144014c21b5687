package tools

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp/syntax"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	re2 "github.com/wasilibs/go-re2"

	"github.com/forkspace/forkspace/provider"
)

type grepIn struct {
	Pattern    string `json:"pattern" jsonschema:"regular expression (RE2 syntax), or the exact text to find when literal is true"`
	Literal    bool   `json:"literal,omitempty" jsonschema:"treat pattern as plain text, not a regular expression"`
	IgnoreCase bool   `json:"ignore_case,omitempty" jsonschema:"match letters in either case"`
	Path       string `json:"path,omitempty" jsonschema:"workspace-relative file or directory to search (default: the root)"`
	Glob       string `json:"glob,omitempty" jsonschema:"only search files whose path matches this glob, e.g. **/*.go; a pattern without / matches file names"`
	Context    int    `json:"context,omitempty" bounds:"0,100" jsonschema:"lines of context to show before and after each match"`
	MaxResults int    `json:"max_results,omitempty" bounds:"0,10000" jsonschema:"maximum matching lines to return (default 100)"`
}

// maxGrepLine caps one line of grep output.
const maxGrepLine = 300

// matcher finds matches in a file's bytes.
type matcher interface {
	// lines returns the 0-based start offsets of the matches in data.
	find(data []byte) []int
}

// literal matches an exact byte string.
type literal []byte

func (l literal) find(data []byte) []int {
	var out []int
	for off := 0; ; {
		i := bytes.Index(data[off:], l)
		if i < 0 {
			return out
		}
		out = append(out, off+i)
		off += i + max(len(l), 1)
		if off > len(data) {
			return out
		}
	}
}

// regex matches an RE2 expression, after a literal prefilter: a file that
// does not contain the expression's required literal is not searched. A
// case-insensitive literal (ASCII only, in lower case) is looked for with
// ASCII letters in either case (containsFold). Unicode folding has two
// more cases for ASCII letters, the Kelvin sign for k and the long s for
// s: a file that may hold either is always searched when the literal
// holds k or s.
type regex struct {
	re      *re2.Regexp
	require []byte
	fold    bool
	rare    int  // the index in require of its rarest byte (fold only)
	unicode bool // require holds k or s (fold only)
}

func (r regex) find(data []byte) []int {
	if r.require != nil && !r.mayMatch(data) {
		return nil
	}
	idx := r.re.FindAllIndex(data, -1)
	out := make([]int, len(idx))
	for i, m := range idx {
		out[i] = m[0]
	}
	return out
}

// mayMatch runs the prefilter.
func (r regex) mayMatch(data []byte) bool {
	switch {
	case !r.fold:
		return bytes.Contains(data, r.require)
	case r.unicode && (bytes.IndexByte(data, 0xE2) >= 0 || bytes.IndexByte(data, 0xC5) >= 0):
		return true // the first bytes of U+212A (Kelvin) and U+017F (long s)
	}
	return containsFold(data, r.require, r.rare)
}

// containsFold reports whether data holds needle (ASCII, lower case, not
// empty) with its ASCII letters in either case. It looks for needle's byte
// rare (in both cases) with bytes.IndexByte and compares needle around
// each place it occurs: no copy of data, and few comparisons when the byte
// is rare in data.
func containsFold(data, needle []byte, rare int) bool {
	lo, up := needle[rare], upperASCII(needle[rare])
	last := len(data) - len(needle) + rare // the last place rare may sit
	nextLo, nextUp := -1, -1               // the next places lo and up occur
	for at := rare; at <= last; {
		if nextLo < at {
			nextLo = indexFrom(data, lo, at)
		}
		if nextUp < at {
			nextUp = indexFrom(data, up, at)
		}
		p := min(nextLo, nextUp)
		if p > last {
			return false
		}
		if equalFoldASCII(data[p-rare:p-rare+len(needle)], needle) {
			return true
		}
		at = p + 1
	}
	return false
}

// indexFrom is the index of the first c in data at or after from, or
// len(data).
func indexFrom(data []byte, c byte, from int) int {
	if i := bytes.IndexByte(data[from:], c); i >= 0 {
		return from + i
	}
	return len(data)
}

// equalFoldASCII reports whether b equals lower (ASCII, lower case) with
// b's ASCII letters in either case.
func equalFoldASCII(b, lower []byte) bool {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func upperASCII(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// byteRarity orders lower-case letters from the most to the least frequent
// in English and source code; rarestByte prefers bytes late in it, and
// other bytes (digits, punctuation) to the first half.
const byteRarity = " etaoinsrlcdhupmfgybwvkxjqz"

// rarestByte returns the index in needle of the byte least likely to occur
// in text, by byteRarity.
func rarestByte(needle []byte) int {
	best, bestRank := 0, -1
	for i, c := range needle {
		rank := strings.IndexByte(byteRarity, c)
		if rank < 0 {
			rank = len(byteRarity) / 2
		}
		if rank > bestRank {
			best, bestRank = i, rank
		}
	}
	return best
}

// newMatcher compiles the pattern of in.
func newMatcher(in grepIn) (matcher, error) {
	if in.Pattern == "" {
		return nil, argError("pattern is empty")
	}
	if in.Literal && !in.IgnoreCase {
		return literal(in.Pattern), nil
	}
	expr := in.Pattern
	if in.Literal {
		expr = re2.QuoteMeta(expr)
	}
	flags := "(?m)"
	if in.IgnoreCase {
		flags = "(?mi)"
	}
	// Parse with regexp/syntax first: same RE2 syntax, and re2 would log
	// parse errors to stderr.
	_, err := syntax.Parse(flags+expr, syntax.Perl)
	var re *re2.Regexp
	if err == nil {
		re, err = re2.Compile(flags + expr)
	}
	if err != nil {
		return nil, argError("invalid regular expression %q: %v; use literal=true to search for the text as is", in.Pattern, err)
	}
	lit, fold := requiredLiteral(flags + expr)
	r := regex{re: re, require: lit, fold: fold}
	if fold && lit != nil {
		r.rare, r.unicode = rarestByte(lit), bytes.ContainsAny(lit, "ks")
	}
	return r, nil
}

// requiredLiteral returns the longest literal every match of expr must
// contain (nil if none is known of at least two bytes), and whether it
// matches case-insensitively (then it is returned in ASCII lower case, and
// only if it is all ASCII).
func requiredLiteral(expr string) ([]byte, bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, false
	}
	re = re.Simplify()
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	var best *syntax.Regexp
	for _, s := range subs {
		if s.Op == syntax.OpLiteral && (best == nil || len(s.Rune) > len(best.Rune)) {
			best = s
		}
	}
	if best == nil || len(best.Rune) < 2 {
		return nil, false
	}
	lit := string(best.Rune)
	if best.Flags&syntax.FoldCase == 0 {
		return []byte(lit), false
	}
	for _, c := range lit {
		if c >= utf8.RuneSelf {
			return nil, false
		}
	}
	return []byte(strings.ToLower(lit)), true
}

// grepFile is the outcome of searching one file.
type grepFile struct {
	lines   []grepLine
	matches int
	more    bool   // matching lines past the limit were left out
	skipped string // "binary" or "large" when not searched
}

// grepLine is one output line: a match, a context line, or a group
// separator ("--").
type grepLine struct {
	text string
	hit  bool
}

func grepTool(ctx context.Context, c *call, in grepIn) (string, error) {
	f, err := c.fsOf()
	if err != nil {
		return "", err
	}
	m, err := newMatcher(in)
	if err != nil {
		return "", err
	}
	root, err := clean(in.Path)
	if err != nil {
		return "", err
	}
	glob := strings.TrimLeft(in.Glob, "/")
	if glob != "" && !doublestar.ValidatePattern(glob) {
		return "", argError("invalid glob %q; examples: **/*.go, *.md", in.Glob)
	}
	limit := in.MaxResults
	if limit == 0 {
		limit = DefaultGrepResults
	}
	results, stopped, err := c.grepFiles(ctx, f, root, glob, func(fes []fileEntry) []grepFile {
		return c.grepBatch(ctx, f, fes, m, in.Context, limit)
	}, limit)
	if err != nil {
		return "", err
	}
	return formatGrep(results, stopped, limit, in.Context, in.Pattern, c.set.opts.MaxGrepFileBytes), nil
}

type fileEntry struct {
	path string
	size int64
}

// A claim of grepFiles is up to grepBatch files or grepBatchBytes bytes
// (whichever comes first): a worker reads them in one request (64 bodies
// are one query of sqlitemeta's batched reads). The files a search holds
// in memory at once are its workers' claims.
const (
	grepBatch      = 64
	grepBatchBytes = 1 << 20
)

// grepFiles searches the regular files under root that match glob with
// search, in parallel, as the walk finds them, and returns the results
// worth reporting (matches or a skipped file) in path order. Files are
// claimed in path order, a few at a time (search gets them together), and
// claiming stops once limit matches are found: the searched files are a
// prefix of the order, which holds the first limit matches, so the output
// is deterministic. stopped reports files left unsearched. Memory is
// bounded by the claims in flight and the results kept, not by the number
// of files: the walk waits for free workers.
func (c *call) grepFiles(ctx context.Context, f provider.FS, root, glob string, search func([]fileEntry) []grepFile, limit int) (results []grepFile, stopped bool, err error) {
	fi, err := f.Stat(ctx, root)
	if err != nil {
		return nil, false, c.fail(ctx, root, err)
	}
	if !fi.IsDir() {
		return search([]fileEntry{{root, fi.Size()}}), false, nil
	}
	match := func(p string) bool {
		switch {
		case glob == "":
			return true
		case !strings.Contains(glob, "/"):
			return doublestar.MatchUnvalidated(glob, path.Base(p))
		}
		return doublestar.MatchUnvalidated(glob, p)
	}
	type claim struct {
		first int // the claim order of fes[0]
		fes   []fileEntry
	}
	var (
		claims = make(chan claim)
		total  atomic.Int64 // matching lines found so far
		mu     sync.Mutex
		kept   = map[int]grepFile{} // by claim order
		wg     sync.WaitGroup
	)
	for range runtime.GOMAXPROCS(0) * 2 {
		wg.Go(func() {
			for cl := range claims {
				for j, r := range search(cl.fes) {
					if r.matches == 0 && r.skipped == "" {
						continue
					}
					total.Add(int64(r.matches))
					mu.Lock()
					kept[cl.first+j] = r
					mu.Unlock()
				}
			}
		})
	}
	var (
		next claim // being filled by the walk
		held int64 // bytes of next's files to read
		n    int   // files claimed
	)
	send := func() error {
		if len(next.fes) == 0 {
			return nil
		}
		select {
		case claims <- next:
			n += len(next.fes)
			next, held = claim{first: n}, 0
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err = walk(ctx, f, root, pruned(c.set.opts.Ignore, root+"/"+glob), func(p string, d fs.DirEntry) error {
		if !d.Type().IsRegular() || !match(p) {
			return nil
		}
		if total.Load() >= int64(limit) {
			stopped = true
			return errStop // next's files stay unsearched, after every searched one
		}
		var size int64 = -1
		if info, err := d.Info(); err == nil {
			size = info.Size()
		}
		next.fes = append(next.fes, fileEntry{p, size})
		if size <= c.set.opts.MaxGrepFileBytes {
			held += max(size, 0) // a larger file is not read
		}
		if len(next.fes) < grepBatch && held < grepBatchBytes {
			return nil
		}
		return send()
	})
	if err == nil && !stopped {
		err = send()
	}
	close(claims)
	wg.Wait()
	if err != nil {
		return nil, false, c.fail(ctx, root, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	order := slices.Sorted(maps.Keys(kept))
	results = make([]grepFile, len(order))
	for j, i := range order {
		results[j] = kept[i]
	}
	return results, stopped, nil
}

// grepBatch searches files for at most limit matching lines each, reading
// the ones it searches in one request (provider.ReadFiles). A file that
// cannot be read has no matches.
func (c *call) grepBatch(ctx context.Context, f provider.FS, fes []fileEntry, m matcher, context, limit int) []grepFile {
	out := make([]grepFile, len(fes))
	var (
		read  []int // indexes of the files read
		names []string
	)
	for i, fe := range fes {
		if fe.size > c.set.opts.MaxGrepFileBytes {
			out[i].skipped = "large"
			continue
		}
		read = append(read, i)
		names = append(names, fe.path)
	}
	// Only a closed file system fails the whole read; its files, like any
	// other unreadable file, have no matches.
	_ = provider.ReadFiles(ctx, f, names, func(j int, data []byte, err error) error {
		if err == nil {
			out[read[j]] = c.grepData(fes[read[j]].path, data, m, context, limit)
		}
		return nil
	})
	return out
}

// grepData searches the contents of the file at p for at most limit
// matching lines.
func (c *call) grepData(p string, data []byte, m matcher, context, limit int) grepFile {
	var r grepFile
	if int64(len(data)) > c.set.opts.MaxGrepFileBytes {
		r.skipped = "large"
		return r
	}
	offsets := m.find(data)
	if len(offsets) == 0 {
		return r
	}
	if isBinary(data) {
		r.skipped = "binary"
		return r
	}
	// Matching line numbers (0-based), in order, without repeats.
	var hits []int
	line, pos := 0, 0
	for i, off := range offsets {
		line += bytes.Count(data[pos:off], []byte{'\n'})
		pos = off
		if len(hits) == 0 || hits[len(hits)-1] != line {
			hits = append(hits, line)
		}
		if len(hits) == limit {
			end := bytes.IndexByte(data[pos:], '\n')
			r.more = end >= 0 && offsets[len(offsets)-1] > pos+end && i < len(offsets)-1
			break
		}
	}
	r.matches = len(hits)
	lines := splitLines(data, hits[len(hits)-1]+context+1)
	shown := -1 // last line printed
	for i, h := range hits {
		from, to := max(h-context, 0), min(len(lines)-1, h+context)
		if i > 0 && context > 0 && from > shown+1 {
			r.lines = append(r.lines, grepLine{text: "--"})
		}
		for l := max(from, shown+1); l <= to; l++ {
			hit := slices.Contains(hits, l)
			sep := "-"
			if hit {
				sep = ":"
			}
			r.lines = append(r.lines, grepLine{text: p + sep + strconv.Itoa(l+1) + sep + cut(lines[l]), hit: hit})
			shown = l
		}
	}
	return r
}

// splitLines returns the first n lines of data (without line ends).
func splitLines(data []byte, n int) []string {
	var out []string
	for len(out) < n && len(data) > 0 {
		l, rest, _ := bytes.Cut(data, []byte{'\n'})
		out = append(out, string(bytes.TrimSuffix(l, []byte{'\r'})))
		data = rest
	}
	return out
}

// cut shortens a line for grep output.
func cut(l string) string {
	if len(l) <= maxGrepLine {
		return l
	}
	return l[:maxGrepLine] + "…"
}

// formatGrep joins the results of the searched files in path order,
// stopping at limit matching lines. stopped reports files left unsearched.
func formatGrep(results []grepFile, stopped bool, limit, context int, pattern string, maxBytes int64) string {
	var (
		b             strings.Builder
		n, bin, large int
	)
	truncated := stopped
	for _, r := range results {
		switch r.skipped {
		case "binary":
			bin++
		case "large":
			large++
		}
		if r.matches == 0 {
			continue
		}
		if n >= limit {
			truncated = true
			continue
		}
		if n > 0 && context > 0 {
			b.WriteString("--\n")
		}
		truncated = truncated || r.more
		for _, l := range r.lines {
			if l.hit {
				if n >= limit {
					truncated = true
					break
				}
				n++
			}
			b.WriteString(l.text)
			b.WriteByte('\n')
		}
	}
	if n == 0 {
		fmt.Fprintf(&b, "no matches for %s\n", pattern)
	}
	if truncated {
		fmt.Fprintf(&b, "… stopped at max_results=%d matching lines; narrow the pattern, path or glob, or raise max_results\n", limit)
	}
	if bin > 0 {
		fmt.Fprintf(&b, "(%d binary files matched; not shown)\n", bin)
	}
	if large > 0 {
		fmt.Fprintf(&b, "(%d files larger than %d bytes were not searched)\n", large, maxBytes)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
