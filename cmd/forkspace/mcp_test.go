package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpCall calls a tool and returns its text and error flag.
func mcpCall(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: protocol error %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.(*mcp.TextContent).Text)
	}
	return b.String(), res.IsError
}

// mcpStdio starts "forkspace mcp" on store for workspace and connects the
// SDK's client to it over stdio.
func mcpStdio(t testing.TB, store, workspace string, extra ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--store", store, "mcp", "-w", workspace}, extra...)...)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestMCPStdio drives the real binary through the MCP protocol with a
// scripted agent session: write code and its test, run the test with exec
// (in the bubblewrap sandbox), checkpoint, break the code, see the test
// fail, diff, restore, see it pass again. go test -v prints the
// transcript.
func TestMCPStdio(t *testing.T) {
	c := newCLI(t)
	cs := mcpStdio(t, c.store, "agent-1", "--auto-checkpoint")
	const (
		calc = "add() { echo $(($1 + $2)); }\n"
		test = ". ./calc.sh\n[ \"$(add 2 3)\" = 5 ] && echo PASS || { echo FAIL: add 2 3 = $(add 2 3); exit 1; }\n"
	)
	steps := []struct {
		tool  string
		args  map[string]any
		want  string
		isErr bool
	}{
		{"write", map[string]any{"path": "calc.sh", "content": calc}, "created calc.sh", false},
		{"write", map[string]any{"path": "calc_test.sh", "content": test}, "created calc_test.sh", false},
		{"exec", map[string]any{"command": "sh calc_test.sh"}, "exit code 0", false},
		{"checkpoint", map[string]any{"label": "green"}, `(label "green")`, false},
		{"edit", map[string]any{"path": "calc.sh", "edits": []map[string]any{{"old_text": "$1 + $2", "new_text": "$1 - $2"}}}, "-add() { echo $(($1 + $2)); }\n+add() { echo $(($1 - $2)); }", false},
		{"exec", map[string]any{"command": "sh calc_test.sh"}, "FAIL: add 2 3 = -1", false},
		{"grep", map[string]any{"pattern": `\$1 - \$2`}, "calc.sh:1:add() { echo $(($1 - $2)); }", false},
		{"diff", map[string]any{"from": "green"}, "modified calc.sh", false},
		{"restore", map[string]any{"checkpoint": "green"}, "restored", false},
		{"exec", map[string]any{"command": "sh calc_test.sh"}, "PASS", false},
		{"read", map[string]any{"path": "calc.sh"}, "$1 + $2", false},
		{"read", map[string]any{"path": "/../etc/passwd"}, "escapes the workspace", true},
		{"exec", map[string]any{"command": "cat /etc/shadow; ls /root"}, "exit code", false},
	}
	for _, s := range steps {
		text, isErr := mcpCall(t, cs, s.tool, s.args)
		t.Logf("→ %s %v\n← %s", s.tool, s.args, text)
		if isErr != s.isErr || !strings.Contains(text, s.want) {
			t.Errorf("%s %v = %q (error %v), want %q (error %v)", s.tool, s.args, text, isErr, s.want, s.isErr)
		}
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	// The work is in the store, and the calls are in the audit log.
	if got := c.ok(nil, "-w", "agent-1", "cat", "calc.sh"); got != "add() { echo $(($1 + $2)); }\n" {
		t.Errorf("after the session: %q", got)
	}
	if got := c.ok(nil, "log", "-w", "agent-1"); !strings.Contains(got, "exec") || !strings.Contains(got, "edit") {
		t.Errorf("audit log:\n%s", got)
	}
}

func TestMCPBadWorkspace(t *testing.T) {
	c := newCLI(t)
	if errs := c.fails(2, nil, "mcp", "-w", "bad name"); !strings.Contains(errs, "workspace name") {
		t.Errorf("stderr = %q", errs)
	}
	c.fails(2, nil, "mcp", "-w", "ws1@cp")
}

// TestServeHTTP runs "forkspace serve" and talks to it with the SDK's
// streamable HTTP client.
func TestServeHTTP(t *testing.T) {
	c := newCLI(t)
	url, stop := serve(t, c.store)
	defer stop()
	ctx := context.Background()
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok\n" {
		t.Errorf("/healthz: %d %q", resp.StatusCode, body)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "?workspace=web"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := mcpCall(t, cs, "write", map[string]any{"path": "index.html", "content": "<h1>hi</h1>\n"}); isErr {
		t.Fatal(text)
	}
	if text, _ := mcpCall(t, cs, "ls", map[string]any{}); text != "index.html (12 bytes)" {
		t.Errorf("ls = %q", text)
	}
	cs.Close()
	stop()
	if got := c.ok(nil, "-w", "web", "cat", "index.html"); got != "<h1>hi</h1>\n" {
		t.Errorf("after serve: %q", got)
	}
}

// TestServeExecCannotReachServer is the end-to-end regression test of
// defect 3 of issue 8: a command run through exec reached the server on
// the host's 127.0.0.1. Under the default policy a call that asks for the
// network is refused; under --network full it gets a network, but neither
// the server's loopback address nor the host (slirp's gateway) answers.
func TestServeExecCannotReachServer(t *testing.T) {
	for _, policy := range []string{"off", "full"} {
		t.Run(policy, func(t *testing.T) {
			c := newCLI(t)
			url, stop := serve(t, c.store, "--network", policy)
			defer stop()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "net-test", Version: "1"}, nil).
				Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "?workspace=net"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			port := url[strings.LastIndex(url, ":")+1 : strings.LastIndex(url, "/")]
			script := "grep -c tap0 /proc/net/dev; for h in 127.0.0.1 10.0.2.2; do " +
				"python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=3)' " +
				"http://$h:" + port + "/healthz >/dev/null 2>&1 && echo REACHED $h; done; true"
			text, isErr := mcpCall(t, cs, "exec", map[string]any{"command": script, "network": true})
			switch {
			case policy == "off":
				if !isErr || !strings.Contains(text, "network access is off") {
					t.Errorf("exec with network under --network off: %q", text)
				}
			case isErr || strings.Contains(text, "REACHED") || !strings.Contains(text, "stdout:\n1"):
				t.Errorf("exec with network under --network full:\n%s", text)
			}
		})
	}
}

// serve starts "forkspace serve" on a free port (with extra flags) and
// returns the /mcp URL and a function that stops it (idempotent).
func serve(t testing.TB, store string, extra ...string) (string, func()) {
	t.Helper()
	_, url, stop := serveProcess(t, []string{"--store", store}, extra...)
	return url, stop
}

// serveProcess is serve with global flags (--store, --meta, --blob…),
// returning the process too.
func serveProcess(t testing.TB, global []string, extra ...string) (*exec.Cmd, string, func()) {
	t.Helper()
	cmd := exec.Command(binary, append(append(slices.Clone(global), "serve", "--addr", "127.0.0.1:0"), extra...)...)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	var url string
	for lines.Scan() {
		if _, after, ok := strings.Cut(lines.Text(), "serving MCP at "); ok {
			url = after
			break
		}
	}
	if url == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("serve did not report its address")
	}
	go func() {
		for lines.Scan() {
		}
	}()
	stopped := false
	stop := func() {
		if stopped || cmd.ProcessState != nil {
			return
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve exited: %v", err)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("serve did not stop on SIGTERM")
		}
	}
	return cmd, url, stop
}
