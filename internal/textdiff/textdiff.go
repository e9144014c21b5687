package textdiff

import (
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/aymanbagabas/go-udiff/lcs"
)

// ContextLines is the number of unchanged lines shown around each hunk.
const ContextLines = 3

// Unified returns the unified diff of old and new labelled oldLabel and
// newLabel, or "" when they are equal.
func Unified(oldLabel, newLabel, old, new string) string {
	if old == new {
		return ""
	}
	a, b := splitLines(old), splitLines(new)
	symbols := map[string]rune{}
	encode := func(lines []string) []rune {
		out := make([]rune, len(lines))
		for i, l := range lines {
			r, ok := symbols[l]
			if !ok {
				r = rune(len(symbols))
				symbols[l] = r
			}
			out[i] = r
		}
		return out
	}
	ra, rb := encode(a), encode(b)
	offsets := make([]int, len(a)+1)
	for i, l := range a {
		offsets[i+1] = offsets[i] + len(l)
	}
	var edits []udiff.Edit
	for _, d := range lcs.DiffRunes(ra, rb) {
		edits = append(edits, udiff.Edit{
			Start: offsets[d.Start],
			End:   offsets[d.End],
			New:   strings.Join(b[d.ReplStart:d.ReplEnd], ""),
		})
	}
	out, err := udiff.ToUnified(oldLabel, newLabel, old, edits, ContextLines)
	if err != nil {
		// The edits are built from old's own line offsets, so they are
		// always consistent; fall back to the library's rendering anyway.
		return udiff.Unified(oldLabel, newLabel, old, new)
	}
	return out
}

// splitLines splits s after each newline, keeping the newlines; a last line
// without one is kept as is.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
