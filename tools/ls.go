package tools

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

type lsIn struct {
	Path   string `json:"path,omitempty" jsonschema:"workspace-relative directory (default: the root)"`
	Offset int    `json:"offset,omitempty" bounds:"0,1000000000" jsonschema:"number of entries to skip"`
	Limit  int    `json:"limit,omitempty" bounds:"0,100000" jsonschema:"maximum entries to return (default 200)"`
}

type globIn struct {
	Pattern string `json:"pattern" jsonschema:"glob over workspace paths: * matches within a name, ** across directories, {a,b} alternatives; e.g. **/*.go or src/*.{js,ts}"`
	Limit   int    `json:"limit,omitempty" bounds:"0,100000" jsonschema:"maximum paths to return (default 500)"`
}

func (s *Set) addSearchTools() {
	add(s, readOnly, "glob", "Find paths matching a glob pattern, sorted. Directories such as .git and node_modules are skipped "+
		"unless the pattern names them.", globTool)
	add(s, readOnly, "grep", "Search file contents with a regular expression (RE2 syntax) or a literal string. "+
		"Prints path:line:text for matches (path-line-text for context lines). Binary and very large files are skipped.", grepTool)
}

func lsTool(ctx context.Context, c *call, in lsIn) (string, error) {
	f, p, err := c.fsPath(in.Path)
	if err != nil {
		return "", err
	}
	limit := in.Limit
	if limit == 0 {
		limit = DefaultListEntries
	}
	entries, err := f.ReadDir(ctx, p)
	if err != nil {
		if fi, serr := f.Stat(ctx, p); serr == nil && !fi.IsDir() {
			return "", argError("%s is a file (%d bytes), not a directory; use read or stat", p, fi.Size())
		}
		return "", c.fail(ctx, p, err)
	}
	if len(entries) == 0 {
		return display(p) + " is empty", nil
	}
	if in.Offset >= len(entries) {
		return "", argError("offset %d is past the end: %s has %d entries", in.Offset, display(p), len(entries))
	}
	page := entries[in.Offset:min(len(entries), in.Offset+limit)]
	var b strings.Builder
	for _, e := range page {
		b.WriteString(entryLine(e))
		b.WriteByte('\n')
	}
	if rest := len(entries) - in.Offset - len(page); rest > 0 {
		fmt.Fprintf(&b, "… %d more entries; call ls with offset=%d", rest, in.Offset+len(page))
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// entryLine describes a directory entry: "name/" for directories, "name
// (N bytes)" for files, "name@" for symlinks, "name (fifo)" and the like
// for special files.
func entryLine(e fs.DirEntry) string {
	switch t := e.Type(); {
	case t.IsDir():
		return e.Name() + "/"
	case t&fs.ModeSymlink != 0:
		return e.Name() + "@ (symlink)"
	case !t.IsRegular():
		return e.Name() + " (" + typeName(t) + ")"
	}
	if fi, err := e.Info(); err == nil {
		return fmt.Sprintf("%s (%d bytes)", e.Name(), fi.Size())
	}
	return e.Name()
}

func globTool(ctx context.Context, c *call, in globIn) (string, error) {
	f, err := c.fsOf()
	if err != nil {
		return "", err
	}
	pattern := strings.TrimLeft(in.Pattern, "/")
	if pattern == "" || !doublestar.ValidatePattern(pattern) {
		return "", argError("invalid glob pattern %q; examples: **/*.go, src/*.{js,ts}, docs/**", in.Pattern)
	}
	limit := in.Limit
	if limit <= 0 {
		limit = DefaultGlobResults
	}
	base, _ := doublestar.SplitPattern(pattern)
	root, err := clean(base)
	if err != nil {
		return "", err
	}
	if fi, err := f.Stat(ctx, root); err != nil || !fi.IsDir() {
		return fmt.Sprintf("no paths match %s", in.Pattern), nil
	}
	var out []string
	more := false
	err = walk(ctx, f, root, pruned(c.set.opts.Ignore, pattern), func(p string, d fs.DirEntry) error {
		if !doublestar.MatchUnvalidated(pattern, p) {
			return nil
		}
		if len(out) == limit {
			more = true
			return errStop
		}
		if d.IsDir() {
			p += "/"
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return "", c.fail(ctx, root, err)
	}
	if len(out) == 0 {
		return fmt.Sprintf("no paths match %s", in.Pattern), nil
	}
	text := strings.Join(out, "\n")
	if more {
		text += fmt.Sprintf("\n… more paths match; showing the first %d. Narrow the pattern or raise limit", limit)
	}
	return text, nil
}
