package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/forkspace/forkspace/internal/citest"
)

// debianPython is the interpreter whose packages scripts/test.sh installs
// (python3-pytest, python3-venv); a pyenv or other python3 first on PATH
// would not have them.
const debianPython = "/usr/bin/python3"

// TestPythonSDK installs the Python SDK with pip into a fresh virtual
// environment from the repository alone (no network: its build backend is
// in the tree) and runs its pytest suite against a real `forkspace serve`
// the suite starts with this binary. In CI (CI=true) a missing Debian
// python3, pytest or venv fails the test; elsewhere it is skipped.
func TestPythonSDK(t *testing.T) {
	if err := exec.Command(debianPython, "-c", "import pytest, venv, ensurepip").Run(); err != nil {
		citest.Missing(t, "%s with pytest and venv not found (Debian python3-pytest, python3-venv): %v", debianPython, err)
	}
	sdk, err := filepath.Abs("../../clients/python")
	if err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(t.TempDir(), "venv")
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = t.TempDir() // not the SDK's directory: the installed package is what is tested
		cmd.Env = append(os.Environ(), "FORKSPACE_BIN="+binary, "PIP_NO_INDEX=1", "PIP_DISABLE_PIP_VERSION_CHECK=1",
			"PYTHONDONTWRITEBYTECODE=1", "FORKSPACE_SERVER=", "FORKSPACE_TOKEN=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		t.Logf("%s %v:\n%s", filepath.Base(name), args[len(args)-1:], out)
	}
	run(debianPython, "-m", "venv", "--system-site-packages", venv)
	run(filepath.Join(venv, "bin", "pip"), "install", "--no-cache-dir", "-q", sdk)
	run(filepath.Join(venv, "bin", "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", filepath.Join(sdk, "tests"))
}
