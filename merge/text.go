package merge

import (
	"bytes"
	"strings"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Labels name the sides in conflict markers.
type Labels struct {
	Ours, Base, Theirs string
}

// TextResult is the outcome of Text.
type TextResult struct {
	// Data is the merged text; where the sides clash it holds conflict
	// markers (diff3 style: ours, base, theirs).
	Data []byte
	// Conflicts counts the clashing regions (0: Data is a clean merge).
	Conflicts int
}

// Text merges two edits of base line by line, with diff3 semantics: the
// two line diffs from base are laid side by side, a region only one side
// changed takes that side's lines, a region both changed the same way
// takes them once, and a region both changed differently, or changes that
// touch (adjacent lines), is a conflict, written between markers
//
//	<<<<<<< ours
//	…ours' lines…
//	||||||| base
//	…base's lines…
//	=======
//	…theirs' lines…
//	>>>>>>> theirs
//
// A file whose last line lacks a newline keeps it that way; a marker line
// always ends with one, "\r\n" in a file whose lines end so (as ours'
// first line does, else theirs', else base's).
func Text(base, ours, theirs []byte, l Labels) TextResult {
	if bytes.Equal(ours, theirs) || bytes.Equal(base, theirs) {
		return TextResult{Data: bytes.Clone(ours)}
	}
	if bytes.Equal(base, ours) {
		return TextResult{Data: bytes.Clone(theirs)}
	}
	enc := encoder{ids: map[string]rune{}}
	b, o, t := splitLines(base), splitLines(ours), splitLines(theirs)
	eb, eo, et := enc.encode(b), enc.encode(o), enc.encode(t)
	ho, ht := enc.hunks(eb, eo), enc.hunks(eb, et)
	var (
		out bytes.Buffer
		res TextResult
		eol = lineEnd(o, t, b)
	)
	pos := 0 // next base line to copy
	i, j := 0, 0
	for i < len(ho) || j < len(ht) {
		// A cluster: hunks of either side that overlap or touch.
		var start int
		switch {
		case j >= len(ht) || i < len(ho) && ho[i].start <= ht[j].start:
			start = ho[i].start
		default:
			start = ht[j].start
		}
		end := start
		i0, j0 := i, j
		for grew := true; grew; {
			grew = false
			if i < len(ho) && ho[i].start <= end {
				end, grew = max(end, ho[i].end), true
				i++
			}
			if j < len(ht) && ht[j].start <= end {
				end, grew = max(end, ht[j].end), true
				j++
			}
		}
		writeLines(&out, b[pos:start])
		pos = end
		so := apply(b, start, end, ho[i0:i])
		st := apply(b, start, end, ht[j0:j])
		switch {
		case i == i0:
			writeLines(&out, st)
		case j == j0 || slicesEqual(so, st):
			writeLines(&out, so)
		default:
			res.Conflicts++
			marker(&out, eol, "<<<<<<< ", l.Ours)
			writeLines(&out, so)
			marker(&out, eol, "||||||| ", l.Base)
			writeLines(&out, b[start:end])
			marker(&out, eol, "=======", "")
			writeLines(&out, st)
			marker(&out, eol, ">>>>>>> ", l.Theirs)
		}
	}
	writeLines(&out, b[pos:])
	res.Data = out.Bytes()
	return res
}

// hunk replaces base lines [start, end) by lines.
type hunk struct {
	start, end int
	lines      []string
}

// encoder maps each distinct line to a rune, so that a rune diff of the
// encoded texts is a line diff.
type encoder struct {
	ids   map[string]rune
	lines []string
}

func (e *encoder) encode(lines []string) []rune {
	out := make([]rune, len(lines))
	for i, s := range lines {
		r, ok := e.ids[s]
		if !ok {
			r = rune(0x100 + len(e.lines)) // past ASCII: the diff works on runes
			if r >= 0xD800 {
				r += 0x800 // skip the surrogates
			}
			e.ids[s] = r
			e.lines = append(e.lines, s)
		}
		out[i] = r
	}
	return out
}

func (e *encoder) decode(rs []rune) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		if r >= 0xE000 {
			r -= 0x800
		}
		out[i] = e.lines[r-0x100]
	}
	return out
}

// hunks returns the line hunks that turn base into side, by base line.
func (e *encoder) hunks(base, side []rune) []hunk {
	bs, ss := string(base), string(side)
	bi := runeIndex(bs)
	var out []hunk
	for _, ed := range udiff.Strings(bs, ss) {
		out = append(out, hunk{start: bi[ed.Start], end: bi[ed.End], lines: e.decode([]rune(ed.New))})
	}
	return out
}

// runeIndex maps each byte offset that starts a rune (and the end) of s to
// the rune's index.
func runeIndex(s string) map[int]int {
	idx := make(map[int]int, utf8.RuneCountInString(s)+1)
	n := 0
	for off := range s {
		idx[off] = n
		n++
	}
	idx[len(s)] = n
	return idx
}

// apply returns base lines [start, end) with hs applied.
func apply(base []string, start, end int, hs []hunk) []string {
	var out []string
	pos := start
	for _, h := range hs {
		out = append(out, base[pos:h.start]...)
		out = append(out, h.lines...)
		pos = h.end
	}
	return append(out, base[pos:end]...)
}

func slicesEqual(a, b []string) bool {
	return strings.Join(a, "") == strings.Join(b, "")
}

// splitLines cuts s after each newline; the last line may lack one.
func splitLines(s []byte) []string {
	var out []string
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, string(s))
			break
		}
		out = append(out, string(s[:i+1]))
		s = s[i+1:]
	}
	return out
}

func writeLines(w *bytes.Buffer, lines []string) {
	for _, s := range lines {
		w.WriteString(s)
	}
}

// marker writes a conflict marker line ending with eol, first ending the
// text before it if it lacks a newline.
func marker(w *bytes.Buffer, eol, prefix, label string) {
	if b := w.Bytes(); len(b) > 0 && b[len(b)-1] != '\n' {
		w.WriteString(eol)
	}
	w.WriteString(prefix)
	w.WriteString(label)
	w.WriteString(eol)
}

// lineEnd is the line ending of the first of the files that has a line:
// "\r\n" if that line ends so, else "\n".
func lineEnd(files ...[]string) string {
	for _, f := range files {
		if len(f) > 0 {
			if strings.HasSuffix(f[0], "\r\n") {
				return "\r\n"
			}
			return "\n"
		}
	}
	return "\n"
}
