package textdiff

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestInsertionShowsOnlyTheNewLine(t *testing.T) {
	old := "func main() {\n\tfmt.Println(\"hello\")\n}\n"
	new := "func main() {\n\tfmt.Println(\"hello\")\n\tfmt.Println(\"bonjour\")\n}\n"
	got := Unified("a/main.go", "b/main.go", old, new)
	if strings.Contains(got, "-\tfmt.Println(\"hello\")") {
		t.Fatalf("unchanged line shown as removed:\n%s", got)
	}
	if !strings.Contains(got, "+\tfmt.Println(\"bonjour\")") {
		t.Fatalf("insertion missing:\n%s", got)
	}
}

func TestEqualIsEmpty(t *testing.T) {
	if got := Unified("a", "b", "x\n", "x\n"); got != "" {
		t.Fatalf("diff of equal texts: %q", got)
	}
}

// TestApplies checks that the hunks describe exactly the change: applying
// the line edits to old yields new, for random line-level edits.
func TestApplies(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		line := rapid.SampledFrom([]string{"a\n", "b\n", "c\n", "d\n", "e"})
		old := strings.Join(rapid.SliceOfN(line, 0, 30).Draw(t, "old"), "")
		new := strings.Join(rapid.SliceOfN(line, 0, 30).Draw(t, "new"), "")
		diff := Unified("a", "b", old, new)
		if (diff == "") != (old == new) {
			t.Fatalf("empty diff %v for old==new %v", diff == "", old == new)
		}
		got, err := applyUnified(old, diff)
		if err != nil {
			t.Fatal(err)
		}
		if got != new {
			t.Fatalf("applying the diff gives %q, want %q\n%s", got, new, diff)
		}
	})
}

// applyUnified applies a unified diff produced by Unified to old: a small
// independent reader of the format (hunk headers give the old start line).
func applyUnified(old, diff string) (string, error) {
	if diff == "" {
		return old, nil
	}
	src := splitLines(old)
	var out []string
	next := 0 // next unconsumed line of src
	lines := strings.SplitAfter(diff, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"), l == "":
		case strings.HasPrefix(l, "@@"):
			var start, n int
			if _, err := fmt.Sscanf(l, "@@ -%d", &start); err != nil {
				return "", err
			}
			if strings.HasPrefix(l, fmt.Sprintf("@@ -%d,0 ", start)) {
				n = start // insertion after line start
			} else {
				n = start - 1
			}
			out = append(out, src[next:n]...)
			next = n
		case strings.HasPrefix(l, `\ No newline`):
			last := len(out) - 1
			if strings.HasPrefix(lines[i-1], "-") {
				continue // the removed line lacked a newline; nothing to emit
			}
			out[last] = strings.TrimSuffix(out[last], "\n")
		case l[0] == ' ':
			out = append(out, src[next])
			next++
		case l[0] == '-':
			next++
		case l[0] == '+':
			out = append(out, l[1:])
		default:
			return "", fmt.Errorf("bad diff line %q", l)
		}
	}
	out = append(out, src[next:]...)
	return strings.Join(out, ""), nil
}
