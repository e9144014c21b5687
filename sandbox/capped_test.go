package sandbox

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestCappedModel checks capped against the simple model: all of the
// output when it fits, else its first and last bytes around a marker
// that counts the rest exactly.
func TestCappedModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		max := rapid.IntRange(0, 64).Draw(t, "max")
		c := &capped{max: max}
		var all []byte
		for _, w := range rapid.SliceOf(rapid.SliceOf(rapid.SampledFrom([]byte("ab\n")))).Draw(t, "writes") {
			c.Write(w)
			all = append(all, w...)
		}
		got := c.String()
		if len(all) <= max {
			if got != string(all) {
				t.Fatalf("fits: got %q, want %q", got, all)
			}
			return
		}
		i := strings.Index(got, "[output truncated: ")
		if i < 0 {
			t.Fatalf("no marker in %q", got)
		}
		head := strings.TrimSuffix(got[:i], "\n")
		rest := got[i:]
		j := strings.IndexByte(rest, '\n')
		var cut int
		fmt.Sscanf(rest, "[output truncated: %d bytes cut here]", &cut)
		tail := rest[j+1:]
		if !bytes.HasPrefix(all, []byte(got[:i])) && !bytes.HasPrefix(all, []byte(head)) {
			t.Fatalf("head %q is not a prefix of %q", head, all)
		}
		if !bytes.HasSuffix(all, []byte(tail)) {
			t.Fatalf("tail %q is not a suffix of %q", tail, all)
		}
		if len(got[:i])+cut+len(tail) != len(all) && len(head)+cut+len(tail) != len(all) {
			t.Fatalf("head %d + cut %d + tail %d != %d", len(head), cut, len(tail), len(all))
		}
		if len(head)+len(tail) > max {
			t.Fatalf("kept %d bytes, more than %d", len(head)+len(tail), max)
		}
	})
}
