package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPeekCall(t *testing.T) {
	big := strings.Repeat("x", 3<<20)
	for _, tc := range []struct {
		in   string
		want call
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write","arguments":{"path":"a","content":"` + big + `"}}}`, call{ID: []byte("3"), Method: "tools/call", Tool: "write"}, true},
		// The TypeScript SDK puts the id last.
		{` { "method" : "tools/call" , "params" : { "arguments" : { "content" : "` + big + `\"\\" , "n" : [1, {"a": "}"}] }, "name" : "edit" } , "jsonrpc" : "2.0" , "id" : "abc" } `, call{ID: []byte(`"abc"`), Method: "tools/call", Tool: "edit"}, true},
		{`{"id":null,"method":"ping"}`, call{ID: []byte("null"), Method: "ping"}, true},
		{`{"id":7,"method":"tools/call","params":[1,2]}`, call{ID: []byte("7"), Method: "tools/call"}, true},
		{`{"method":"x","id":`, call{Method: "x"}, false},
		{`[1,2]`, call{}, false},
		{``, call{}, false},
		{`{"id":"` + strings.Repeat("i", 300) + `","method":"m"}`, call{ID: []byte(`""`), Method: "m"}, true},
	} {
		got, err := peekCall(strings.NewReader(tc.in))
		if (err == nil) != tc.ok {
			t.Errorf("peekCall(%.60q): error %v, want ok=%v", tc.in, err, tc.ok)
		}
		if string(got.ID) != string(tc.want.ID) || got.Method != tc.want.Method || got.Tool != tc.want.Tool {
			t.Errorf("peekCall(%.60q) = {%s %q %q}, want {%s %q %q}", tc.in, got.ID, got.Method, got.Tool, tc.want.ID, tc.want.Method, tc.want.Tool)
		}
	}
}

// FuzzPeekCall checks peekCall against encoding/json: on any input it
// does not panic, and on a valid request object with short fields it
// finds what a full decode finds.
func FuzzPeekCall(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{"content":"a\"b"}}}`)
	f.Add(`{"params":{"name":"x"},"id":"q","method":"m"}`)
	f.Add(`{"id":[1],"method":{"a":1}}`)
	f.Fuzz(func(t *testing.T, in string) {
		got, err := peekCall(strings.NewReader(in))
		var want struct {
			ID     json.RawMessage `json:"id"`
			Method any             `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err != nil || !utf8.ValidString(in) || json.Unmarshal([]byte(in), &want) != nil || len(in) > maxKept {
			return
		}
		if m, ok := want.Method.(string); ok && !strings.Contains(in, `\`) && got.Method != m {
			t.Errorf("method %q, want %q", got.Method, m)
		}
		var p struct {
			Name any `json:"name"`
		}
		if json.Unmarshal(want.Params, &p) == nil {
			if n, ok := p.Name.(string); ok && !strings.Contains(in, `\`) && got.Tool != n {
				t.Errorf("tool %q, want %q", got.Tool, n)
			}
		}
	})
}
