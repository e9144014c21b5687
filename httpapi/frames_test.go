package httpapi

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/forkspace/forkspace/audit"
)

// TestFramesShareOnlyTheSameEvent: the frame cache hands every stream
// exactly the encoding of its event, whatever was encoded before it in
// the same slot: an event of another sequence number, or the same one
// under another workspace name.
func TestFramesShareOnlyTheSameEvent(t *testing.T) {
	var f frames
	n := int64(len(f.slot))
	events := []Event{
		{Entry: audit.Entry{Seq: 1, Tool: "write", Changed: []string{"a"}}, Workspace: "w"},
		{Entry: audit.Entry{Seq: 1 + n, Tool: "remove", Changed: []string{"b"}}, Workspace: "w"},
		{Entry: audit.Entry{Seq: 1, Tool: "write", Changed: []string{"a"}}, Workspace: ""},
		{Entry: audit.Entry{Seq: 1, Tool: "write", Changed: []string{"a"}}, Workspace: "w"},
		{Entry: audit.Entry{Seq: 2, Tool: "mkdir", Changed: []string{"c"}}, Workspace: "w"},
	}
	for round := range 2 {
		for _, e := range events {
			got, err := f.of(e)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := json.Marshal(e)
			if want := fmt.Sprintf("id: %d\nevent: change\ndata: %s\n\n", e.Seq, data); string(got) != want {
				t.Errorf("round %d, event %d of %q: frame\n%s\nwant\n%s", round, e.Seq, e.Workspace, got, want)
			}
			chunked, err := f.chunked(e)
			if want := fmt.Sprintf("%x\r\n%s\r\n", len(got), got); err != nil || string(chunked) != want {
				t.Errorf("round %d, event %d of %q: chunk %q, want %q (%v)", round, e.Seq, e.Workspace, chunked, want, err)
			}
		}
	}
}
