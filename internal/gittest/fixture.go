package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Fixture is a bare repository with this history:
//
//	Initial  README.md ("v1\n")                          tags v1.0 (annotated), light
//	Main     README.md ("v2\n"), bin/run.sh (0755),
//	         docs/guide.md, docs/sub/deep.txt,
//	         link -> README.md, docs/up -> ../README.md   branch main (HEAD)
//	Feature  Main + feature.txt                          branch feature
type Fixture struct {
	// Root holds the bare repository Name (root/name.git), the directory to
	// serve with Serve.
	Root string
	// Name is the repository's directory name under Root ("repo.git").
	Name string
	// Initial, Main and Feature are commit hashes.
	Initial, Main, Feature string
}

// Bare is the bare repository's path.
func (f *Fixture) Bare() string { return filepath.Join(f.Root, f.Name) }

// NewFixture builds the fixture in a temp dir.
func NewFixture(tb testing.TB) *Fixture {
	tb.Helper()
	root := tb.TempDir()
	work := filepath.Join(tb.TempDir(), "work")
	f := &Fixture{Root: root, Name: "repo.git"}
	Git(tb, "", "init", "-q", "-b", "main", work)
	write := func(rel, data string, mode os.FileMode) {
		p := filepath.Join(work, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			tb.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			tb.Fatal(err)
		}
	}
	symlink := func(target, rel string) {
		if err := os.Symlink(target, filepath.Join(work, rel)); err != nil {
			tb.Fatal(err)
		}
	}
	commit := func(msg string) string {
		Git(tb, work, "add", "-A")
		Git(tb, work, "commit", "-q", "-m", msg)
		return Git(tb, work, "rev-parse", "HEAD")
	}

	write("README.md", "v1\n", 0o644)
	f.Initial = commit("initial")
	Git(tb, work, "tag", "-a", "-m", "release 1.0", "v1.0")
	Git(tb, work, "tag", "light")

	write("README.md", "v2\n", 0o644)
	write("bin/run.sh", "#!/bin/sh\necho run\n", 0o755)
	write("docs/guide.md", "# Guide\n", 0o644)
	write("docs/sub/deep.txt", "deep\n", 0o644)
	symlink("README.md", "link")
	symlink("../README.md", "docs/up")
	f.Main = commit("main")

	Git(tb, work, "checkout", "-q", "-b", "feature")
	write("feature.txt", "feature\n", 0o644)
	f.Feature = commit("feature")
	Git(tb, work, "checkout", "-q", "main")

	Git(tb, "", "clone", "-q", "--bare", work, f.Bare())
	return f
}

// Git runs the git binary in dir ("" for the current directory) with a
// fixed identity and dates and no user or system configuration, and returns
// its trimmed standard output. A missing git or a failing command fails the
// test.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	bin := gitPath(tb)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=gittest", "GIT_AUTHOR_EMAIL=gittest@example.invalid",
		"GIT_COMMITTER_NAME=gittest", "GIT_COMMITTER_EMAIL=gittest@example.invalid",
		"GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z",
	)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.TrimSpace(string(out))
}

// gitPath finds the git binary or fails the test.
func gitPath(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("git")
	if err != nil {
		tb.Fatalf("git is required by this test (scripts/test.sh installs it): %v", err)
	}
	return bin
}
