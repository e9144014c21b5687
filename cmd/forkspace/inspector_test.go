package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/internal/citest"
)

// inspectors are the MCP Inspector releases this test runs: 0.15, whose
// CLI rejected union types in tool schemas (it sent edit's
// ["null","array"] edits as a string), and a later one.
var inspectors = []string{"@modelcontextprotocol/inspector@0.15.0", "@modelcontextprotocol/inspector@0.17.2"}

// TestMCPInspector lists and calls the tools, an edit with an array
// argument among them, with an MCP client this project did not write: the
// MCP Inspector's CLI mode, from npm. In CI (CI=true) a missing npx fails
// the test; elsewhere the test is skipped.
func TestMCPInspector(t *testing.T) {
	for _, inspector := range inspectors {
		t.Run(strings.TrimPrefix(inspector, "@modelcontextprotocol/"), func(t *testing.T) { testInspector(t, inspector) })
	}
}

func testInspector(t *testing.T, inspector string) {
	npx, err := exec.LookPath("npx")
	if err != nil {
		citest.Missing(t, "npx not found; install node and npm to run the MCP Inspector")
	}
	c := newCLI(t)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(npx, append([]string{"-y", inspector, "--cli", binary, "--store=" + c.store, "mcp", "--workspace=insp"}, args...)...)
		cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", "npm_config_update_notifier=false")
		out, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("inspector %v: %v\n%s\n%s", args, err, out, stderr)
		}
		return string(out)
	}
	var list struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(run("--method", "tools/list")), &list); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range list.Tools {
		names[tl.Name] = true
		if tl.InputSchema["type"] != "object" {
			t.Errorf("%s: input schema %v", tl.Name, tl.InputSchema)
		}
	}
	for _, want := range []string{"read", "write", "edit", "grep", "checkpoint", "restore", "diff", "fork", "exec"} {
		if !names[want] {
			t.Errorf("inspector does not see tool %s", want)
		}
	}
	run("--method", "tools/call", "--tool-name", "write", "--tool-arg", "path=notes.md", "--tool-arg", "content=from the inspector")
	out := run("--method", "tools/call", "--tool-name", "read", "--tool-arg", "path=notes.md")
	if !strings.Contains(out, `from the inspector`) {
		t.Errorf("read through the inspector: %s", out)
	}
	out = run("--method", "tools/call", "--tool-name", "edit", "--tool-arg", "path=notes.md",
		"--tool-arg", `edits=[{"old_text":"from","new_text":"edited by"}]`)
	if !strings.Contains(out, "edited notes.md") {
		t.Errorf("edit through the inspector: %s", out)
	}
}
