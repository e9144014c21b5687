package vfs

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestPathListSpills adds more paths than a pathList holds in memory: they
// come back whole and in order, with at most spillPaths bytes of them in
// memory, also when spilling fails (they then stay in memory).
func TestPathListSpills(t *testing.T) {
	old := spillPaths
	spillPaths = 100
	t.Cleanup(func() { spillPaths = old })
	var want []string
	for i := range 1000 {
		want = append(want, fmt.Sprintf("dir%d/%s", i%7, strings.Repeat("x", i%13)))
	}
	for _, tmp := range []string{t.TempDir(), "/nonexistent/forkspace-test"} {
		t.Setenv("TMPDIR", tmp)
		var l pathList
		for i := 0; i < len(want); i += 3 {
			l.add(want[i:min(i+3, len(want))]...)
			if !l.failed && len(l.buf) >= spillPaths {
				t.Fatalf("TMPDIR %s: %d bytes held after an add", tmp, len(l.buf))
			}
		}
		if got := slices.Collect(l.all()); !slices.Equal(got, want) {
			t.Fatalf("TMPDIR %s: %d paths back, want %d (first %q)", tmp, len(got), len(want), got[:min(3, len(got))])
		}
		if wantFail := tmp == "/nonexistent/forkspace-test"; l.failed != wantFail {
			t.Errorf("TMPDIR %s: spill failed %v, want %v", tmp, l.failed, wantFail)
		}
		l.close()
	}
}
