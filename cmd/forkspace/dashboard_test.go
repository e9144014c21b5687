package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/internal/citest"
)

// browser starts a headless Chromium (Debian's chromium) for a test and
// returns a context that drives one tab of it. In CI (CI=true) a missing
// browser fails the test; elsewhere the test is skipped.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		citest.Missing(t, "chromium not found; apt-get install chromium to run the dashboard tests")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // the tests run as root
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(cancelTab)
	if err := chromedp.Do(ctx); err != nil { // starts the browser: no timeout on this context
		t.Fatalf("start %s: %v", path, err)
	}
	ctx, cancelTime := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelTime)
	return ctx
}

// drive performs browser actions, failing the test with what was being done.
func drive(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// get runs one browser action that returns a value.
func get[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// restGet reads a REST resource of the server at base, returning its status
// and body.
func restGet(t *testing.T, base, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// settled matches the file tree once no change or listing is under way.
const settled = chromedp.CSS(`#tree[aria-busy="false"]`)

// row is the selector of a file tree row's name button.
func row(p string) chromedp.CSS { return chromedp.CSS(`button.name[data-path="` + p + `"]`) }

// TestDashboard drives the dashboard in a real headless Chromium against a
// real `forkspace serve`: open the workspace, upload through the file
// picker, rename, a refused rename rolled back with its error shown,
// delete, restore from the checkpoint timeline, the fork tree, and a
// reload painted from the sessionStorage cache. Every change is checked
// through the REST API too, not only on screen.
func TestDashboard(t *testing.T) {
	ctx := browser(t)
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	c.ok([]byte("hello from the CLI\n"), "put", "-w", "w", "-", "hello.txt")
	mcpURL, stop := serve(t, c.store)
	defer stop()
	base := strings.TrimSuffix(mcpURL, "/mcp")
	shots := os.Getenv("FORKSPACE_SCREENSHOTS") // a directory: write the docs' screenshots there

	drive(t, ctx, "open the workspace list",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-ws="w"] a`)),
		chromedp.Click(chromedp.CSS(`tr[data-ws="w"] a`)),
		chromedp.WaitVisible(row("hello.txt")),
		chromedp.Click(row("hello.txt")),
		chromedp.WaitVisible(chromedp.CSS(`#preview-text`)))
	text := get(t, ctx, "preview", chromedp.Text(chromedp.CSS(`#preview-text`)))
	if !strings.Contains(text, "hello from the CLI") {
		t.Errorf("preview shows %q", text)
	}

	// Live: an agent's write through MCP and a file the CLI puts beside
	// the server show in the open Files tab without a reload (the change
	// feed), and a removal takes its row away.
	agent, err := mcpConnect(mcpURL+"?workspace=w", "")
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	if text, isErr := mcpCall(t, agent, "write", map[string]any{"path": "from-agent.txt", "content": "written by an agent"}); isErr {
		t.Fatalf("MCP write: %s", text)
	}
	drive(t, ctx, "the agent's file appears", chromedp.WaitVisible(row("from-agent.txt")))
	c.ok([]byte("put beside the server\n"), "-w", "w", "put", "-", "from-cli.txt")
	drive(t, ctx, "the CLI's file appears", chromedp.WaitVisible(row("from-cli.txt")))
	if text, isErr := mcpCall(t, agent, "rm", map[string]any{"path": "from-cli.txt"}); isErr {
		t.Fatalf("MCP rm: %s", text)
	}
	drive(t, ctx, "the removed file goes", chromedp.WaitNotPresent(row("from-cli.txt")))

	// Upload through the file picker: the row shows, then the server has
	// the bytes.
	up := filepath.Join(t.TempDir(), "up.txt")
	if err := os.WriteFile(up, []byte("uploaded from the browser"), 0o644); err != nil {
		t.Fatal(err)
	}
	drive(t, ctx, "select the root", chromedp.Click(row("")))
	drive(t, ctx, "upload",
		chromedp.SetUploadFiles(chromedp.CSS(`#upload-files`), []string{up}),
		chromedp.WaitVisible(row("up.txt")),
		chromedp.WaitVisible(settled))
	if st, body := restGet(t, base, "/v1/workspaces/w/files/up.txt"); st != 200 || body != "uploaded from the browser" {
		t.Fatalf("after the upload the server has %d %q", st, body)
	}

	rename := func(from, to string) {
		t.Helper()
		drive(t, ctx, "rename "+from+" to "+to,
			chromedp.Click(chromedp.CSS(`[data-row="`+from+`"] .acts button:nth-of-type(2)`)),
			chromedp.WaitVisible(chromedp.CSS(`#rename-input`)),
			chromedp.SetValue(chromedp.CSS(`#rename-input`), to),
			chromedp.SendKeys(chromedp.CSS(`#rename-input`), "\r"))
	}
	rename("up.txt", "renamed.txt")
	drive(t, ctx, "renamed row", chromedp.WaitVisible(row("renamed.txt")), chromedp.WaitVisible(settled))
	if st, _ := restGet(t, base, "/v1/workspaces/w/stat/renamed.txt"); st != 200 {
		t.Fatalf("renamed.txt: %d after the rename", st)
	}

	// A rename the server refuses (into a directory that does not exist)
	// is rolled back on screen, with the server's error (naming the
	// missing directory) shown.
	rename("renamed.txt", "missing/renamed.txt")
	drive(t, ctx, "refused rename",
		chromedp.WaitVisible(chromedp.CSS(`#toast`)),
		chromedp.WaitVisible(row("renamed.txt")),
		chromedp.WaitVisible(settled))
	if toast := get(t, ctx, "the error shown", chromedp.Text(chromedp.CSS(`#toast`))); !strings.Contains(toast, "missing") {
		t.Errorf("the refused rename shows %q", toast)
	}
	if st, _ := restGet(t, base, "/v1/workspaces/w/stat/renamed.txt"); st != 200 {
		t.Fatalf("renamed.txt: %d after the refused rename", st)
	}

	drive(t, ctx, "delete",
		chromedp.Click(chromedp.CSS(`[data-row="renamed.txt"] button.danger`)),
		chromedp.Click(chromedp.CSS(`[data-row="renamed.txt"] button.danger`)),
		chromedp.WaitNotPresent(row("renamed.txt")),
		chromedp.WaitVisible(settled))
	if st, _ := restGet(t, base, "/v1/workspaces/w/stat/renamed.txt"); st != 404 {
		t.Fatalf("renamed.txt: %d after the delete, want 404", st)
	}
	if shots != "" {
		drive(t, ctx, "show a file", chromedp.Click(row("hello.txt")), chromedp.WaitVisible(chromedp.CSS(`#preview-text`)))
		png := get(t, ctx, "screenshot the Files tab", chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(shots, "dashboard-files.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// A reload paints the cached tree before any listing answers. The time
	// from navigation to the cached tree on screen, over several reloads,
	// goes to docs/benchmarks.md (the goal is 100 ms); it is logged, not
	// asserted.
	paints := make([]float64, 7)
	for i := range paints {
		drive(t, ctx, "reload from the cache", chromedp.Reload(), chromedp.WaitVisible(row("hello.txt")))
		paints[i] = get(t, ctx, "the cached paint", chromedp.Evaluate[float64](`performance.getEntriesByName("fks-cached-paint")[0]?.startTime ?? -1`))
		if paints[i] < 0 {
			t.Fatal("the reload did not paint the Files tab from the sessionStorage cache")
		}
	}
	t.Logf("first paint from the cache, ms after navigation, over %d reloads: %.1f", len(paints), paints)
	slices.Sort(paints)
	t.Logf("first paint from the cache: median %.1f ms, max %.1f ms", paints[len(paints)/2], paints[len(paints)-1])

	// Restore from the timeline: a checkpoint, a later change, then the
	// Restore button (pressed twice: it asks once more).
	c.ok(nil, "checkpoint", "-w", "w", "before")
	c.ok([]byte("changed after the checkpoint\n"), "put", "-w", "w", "-", "hello.txt")
	drive(t, ctx, "restore from the timeline",
		chromedp.Click(chromedp.CSS(`#tab-checkpoints`)),
		chromedp.WaitVisible(chromedp.CSS(`li[data-checkpoint="before"] button.restore`)),
		chromedp.Click(chromedp.CSS(`li[data-checkpoint="before"] button.restore`)),
		chromedp.Click(chromedp.CSS(`li[data-checkpoint="before"] button.restore`)),
		chromedp.WaitVisible(chromedp.CSS(`#toast.info`)))
	if _, body := restGet(t, base, "/v1/workspaces/w/files/hello.txt"); body != "hello from the CLI\n" {
		t.Fatalf("after the restore hello.txt is %q", body)
	}
	c.ok([]byte("after the restore\n"), "put", "-w", "w", "-", "hello.txt")
	drive(t, ctx, "diff with head, side by side",
		chromedp.Click(chromedp.CSS(`li[data-checkpoint="before"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`#diff-unified`)),
		chromedp.Click(chromedp.CSS(`#diff-mode`)),
		chromedp.WaitVisible(chromedp.CSS(`#diff-split`)))
	diff := get(t, ctx, "the diff", chromedp.Text(chromedp.CSS(`#diff-split`)))
	if !strings.Contains(diff, "hello from the CLI") || !strings.Contains(diff, "after the restore") {
		t.Errorf("side-by-side diff shows %q", diff)
	}

	// The fork tree shows the family with this workspace in it.
	c.ok(nil, "workspace", "fork", "w", "w-try-1")
	c.ok(nil, "workspace", "fork", "w", "w-try-2")
	c.ok(nil, "workspace", "fork", "w-try-1", "w-try-1a")
	drive(t, ctx, "fork tree",
		chromedp.Click(chromedp.CSS(`#tab-forks`)),
		chromedp.WaitVisible(chromedp.CSS(`li[data-fork="w-try-1"] li[data-fork="w-try-1a"]`)),
		chromedp.WaitVisible(chromedp.CSS(`li[data-fork="w-try-2"]`)))
	if shots != "" {
		png := get(t, ctx, "screenshot the fork tree", chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(shots, "dashboard-forks.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	var audit []struct {
		Tool  string `json:"tool"`
		Actor string `json:"actor"`
	}
	_, body := restGet(t, base, "/v1/audit?workspace=w")
	if err := json.Unmarshal([]byte(body), &audit); err != nil {
		t.Fatal(err)
	}
	byDashboard := 0
	for _, e := range audit {
		if e.Actor == "dashboard" {
			byDashboard++
		}
	}
	if byDashboard < 4 { // upload, rename, delete, restore
		t.Errorf("the audit log names the dashboard in %d entries, want its upload, rename, delete and restore: %+v", byDashboard, audit)
	}
}

// TestDashboardTokens: on a server whose store holds tokens, the dashboard
// asks for one; a bad token is refused with a message; a read-only token
// limited to one workspace sees that workspace alone and no control that
// would change it; signing out and in again as an admin shows the rest.
func TestDashboardTokens(t *testing.T) {
	ctx := browser(t)
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "open")
	c.ok(nil, "workspace", "create", "secret")
	c.ok([]byte("readable\n"), "put", "-w", "open", "-", "hello.txt")
	var admin, reader auth.Created
	c.json(&admin, "token", "create", "--tenant", "*", "--perm", "all", "--label", "admin")
	c.json(&reader, "token", "create", "--workspaces", "open", "--perm", "read", "--label", "reader")
	mcpURL, stop := serve(t, c.store)
	defer stop()
	base := strings.TrimSuffix(mcpURL, "/mcp")
	if st, _ := restGet(t, base, "/v1/workspaces"); st != http.StatusUnauthorized {
		t.Fatalf("GET /v1/workspaces without a token: %d, want 401", st)
	}

	signIn := func(token string) {
		t.Helper()
		drive(t, ctx, "sign in",
			chromedp.WaitVisible(chromedp.CSS(`#token`)),
			chromedp.SetValue(chromedp.CSS(`#token`), token),
			chromedp.Click(chromedp.CSS(`#signin-submit`)))
	}
	drive(t, ctx, "open the dashboard", chromedp.Navigate(base+"/"))
	signIn("fks_not_a_token")
	drive(t, ctx, "refused token", chromedp.WaitVisible(chromedp.CSS(`#signin-error:not(:empty)`)))
	if msg := get(t, ctx, "the refusal", chromedp.Text(chromedp.CSS(`#signin-error`))); !strings.Contains(msg, "not valid") {
		t.Errorf("a bad token shows %q", msg)
	}

	signIn(reader.Token)
	drive(t, ctx, "the reader's workspaces",
		chromedp.WaitVisible(chromedp.CSS(`tr[data-ws="open"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#who`)))
	hidden := get(t, ctx, "what the reader sees", chromedp.Evaluate[[]bool](`[
		document.querySelector('tr[data-ws="secret"]') === null,
		document.querySelector('#create-ws') === null,
		document.querySelector('tr[data-ws="open"] button') === null]`))
	for i, what := range []string{"another workspace", "the create form", "the delete button"} {
		if !hidden[i] {
			t.Errorf("a read-only token limited to 'open' sees %s", what)
		}
	}
	drive(t, ctx, "the reader's files",
		chromedp.Click(chromedp.CSS(`tr[data-ws="open"] a`)),
		chromedp.WaitVisible(row("hello.txt")),
		chromedp.WaitVisible(chromedp.CSS(`#read-only`)))
	controls := get(t, ctx, "the reader's controls", chromedp.Evaluate[int](`document.querySelectorAll('#upload-files, #mkdir-name, #drop, .acts button.danger').length`))
	if controls != 0 {
		t.Errorf("a read-only token sees %d controls that change files", controls)
	}
	drive(t, ctx, "the reader's preview", chromedp.Click(row("hello.txt")), chromedp.WaitVisible(chromedp.CSS(`#preview-text`)))

	drive(t, ctx, "sign out", chromedp.Click(chromedp.CSS(`#signout`)))
	signIn(admin.Token)
	drive(t, ctx, "the admin's workspaces",
		chromedp.WaitVisible(chromedp.CSS(`tr[data-ws="secret"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#create-ws`)))
}
