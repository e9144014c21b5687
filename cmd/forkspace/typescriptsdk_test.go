package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/internal/citest"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/localprovider"
)

// TestTypeScriptSDK installs the TypeScript SDK's development dependencies
// with `npm ci` from its committed package-lock.json (from npm's cache
// when it has them) into a copy of clients/typescript, then runs `npm test`
// there: tsc compiles the SDK and its tests, and node's test runner runs
// them against real `forkspace serve` processes they start with this
// binary. In CI (CI=true) a missing node or npm fails the test; elsewhere
// it is skipped.
func TestTypeScriptSDK(t *testing.T) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			citest.Missing(t, "%s not found (Debian nodejs and npm): %v", tool, err)
		}
	}
	src, err := filepath.Abs("../../clients/typescript")
	if err != nil {
		t.Fatal(err)
	}
	// A copy without node_modules or build output: what a fresh checkout has.
	dir := filepath.Join(t.TempDir(), "typescript")
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		switch {
		case d.IsDir() && (rel == "node_modules" || rel == "dist" || rel == "build"):
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("npm", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "FORKSPACE_BIN="+binary, "FORKSPACE_SERVER=", "FORKSPACE_TOKEN=",
			"npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("npm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("npm %s:\n%s", strings.Join(args, " "), out)
	}
	run("ci", "--prefer-offline", "--ignore-scripts")
	run("test")

	// Refs cross between the languages: a ref provider/localprovider writes
	// is read by the TypeScript decodeRef and written back by toGoJSON
	// byte for byte, and provider.Ref's strict decoder reads that.
	want := provider.Ref{
		ProviderID:    localprovider.Kind,
		Payload:       json.RawMessage(`{"workspace_id":"ws-0123456789abcdef"}`),
		Capabilities:  provider.Capabilities{FS: true, Snapshot: true},
		SchemaVersion: provider.Version(localprovider.SchemaVersion),
	}
	data, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	node := exec.Command("node", "--input-type=module", "-e",
		`import { decodeRef, toGoJSON } from "./build/src/index.js"; process.stdout.write(toGoJSON(decodeRef(process.argv[1])));`, string(data))
	node.Dir = dir
	back, err := node.Output()
	if err != nil {
		t.Fatalf("node decodeRef/toGoJSON: %v", err)
	}
	if string(back) != string(data) {
		t.Fatalf("ref through TypeScript:\n got %s\nwant %s", back, data)
	}
	var got provider.Ref
	if err := json.Unmarshal(back, &got); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Go decodes the TypeScript ref as %+v (%v), want %+v", got, err, want)
	}
}
