package tools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/tools"
)

// TestHistoryTool lists the steps a session made with their changed paths
// and state refs, then diffs against and restores to one of them.
func TestHistoryTool(t *testing.T) {
	e, _ := newStoreEnv(t, "test", func(st *forkspace.Store) tools.Options { return tools.Options{Recorder: st.AuditLog()} })
	e.ok("history", M{}) // nothing yet
	e.ok("write", M{"path": "a.txt", "content": "v1\n"})
	e.ok("write", M{"path": "a.txt", "content": "v2\n"})
	e.fails("rm", M{"path": "missing"}, "no such file")
	out := e.ok("history", M{"limit": 10})
	for _, want := range []string{"~0 = audit:", "rm  failed (nothing changed)", "~2 = audit:", "write  changed: a.txt"} {
		if !strings.Contains(out, want) {
			t.Errorf("history lacks %q:\n%s", want, out)
		}
	}
	var h struct{ Steps []provider.Step }
	data, _ := json.Marshal(e.call("history", M{}).Structured)
	if err := json.Unmarshal(data, &h); err != nil || len(h.Steps) != 3 || h.Steps[2].Back != "~2" || h.Steps[2].Changed[0] != "a.txt" {
		t.Fatalf("structured history: %s, %v", data, err)
	}
	if d := e.ok("diff", M{"from": "~2"}); !strings.Contains(d, "+v2") {
		t.Errorf("diff from ~2:\n%s", d)
	}
	e.ok("restore", M{"checkpoint": h.Steps[2].State})
	if got := e.get("a.txt"); got != "v1\n" {
		t.Fatalf("after restoring %s a.txt = %q", h.Steps[2].State, got)
	}
	e.fails("restore", M{"checkpoint": "~99"}, "no step ~99 in this workspace's kept history")
	e.fails("diff", M{"from": "audit:1x"}, "want audit:SEQ")
	e.fails("history", M{"limit": 201}, "limit")
}
