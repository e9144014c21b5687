package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required (Debian nodejs and npm; scripts/test.sh installs them): %v", tool, err)
			}
			t.Skipf("%s not found: %v", tool, err)
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
}
