package transfer

import (
	"fmt"
	"testing"
)

// TestNameSetSpills adds more names than a nameSet holds in memory: every
// name added is found, in memory or in a sorted run on disk, and no other,
// with at most setMemory hashes in memory; a failed spill keeps them all
// in memory.
func TestNameSetSpills(t *testing.T) {
	old := setMemory
	setMemory = 64
	t.Cleanup(func() { setMemory = old })
	for _, tmp := range []string{t.TempDir(), "/nonexistent/forkspace-test"} {
		t.Setenv("TMPDIR", tmp)
		s := newNameSet()
		for i := range 1000 {
			s.add(fmt.Sprintf("d%d/f%d", i%9, i))
			if !s.failed && len(s.mem) >= setMemory {
				t.Fatalf("TMPDIR %s: %d hashes in memory after an add", tmp, len(s.mem))
			}
		}
		for i := range 1000 {
			if !s.has(fmt.Sprintf("d%d/f%d", i%9, i)) {
				t.Fatalf("TMPDIR %s: name %d added and not found", tmp, i)
			}
			if s.has(fmt.Sprintf("d%d/g%d", i%9, i)) {
				t.Fatalf("TMPDIR %s: name %d found, never added", tmp, i)
			}
		}
		if wantFail := tmp == "/nonexistent/forkspace-test"; s.failed != wantFail || !wantFail && len(s.runs) != 1000/64 {
			t.Errorf("TMPDIR %s: spill failed %v, %d runs", tmp, s.failed, len(s.runs))
		}
		s.close()
	}
}
