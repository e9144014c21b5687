package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/fusefs/posixsuite"
	"github.com/forkspace/forkspace/internal/pgtest"
)

var (
	// binary is the forkspace command built once for all tests.
	binary string
	// buildFlags are extra go build flags (race_test.go adds -race).
	buildFlags []string
)

func TestMain(m *testing.M) {
	posixsuite.ServeChild() // a child of posix_test.go: one op as another user
	dir, err := os.MkdirTemp("", "forkspace-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "forkspace")
	// go test puts its own GOROOT/bin first on PATH.
	build := exec.Command("go", append(append([]string{"build"}, buildFlags...), "-o", binary, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build forkspace:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := pgtest.Run(m) // a PostgreSQL server for pgmeta_test.go
	os.RemoveAll(dir)
	posixsuite.Cleanup()
	os.Exit(code)
}

// cli runs the binary against one store from a scratch working directory.
type cli struct {
	t     *testing.T
	store string
	cwd   string
}

func newCLI(t *testing.T) *cli {
	c := &cli{t: t, store: filepath.Join(t.TempDir(), "store"), cwd: t.TempDir()}
	c.ok(nil, "init")
	if throughServer {
		// Every command of the test finds the store busy and goes
		// through this server (both_test.go).
		_, stop := serve(t, c.store)
		t.Cleanup(stop)
	}
	return c
}

// run executes the command line with stdin and returns stdout, stderr and
// the exit code.
func (c *cli) run(stdin []byte, args ...string) (string, string, int) {
	c.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = c.cwd
	// A race-built binary exits with code 66 on a race; without the exit
	// sleep it starts and stops as fast as a plain one.
	cmd.Env = append(os.Environ(), "FORKSPACE_HOME="+c.store, "FORKSPACE_WORKSPACE=", "GORACE=atexit_sleep_ms=0")
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		c.t.Fatalf("run %v: %v", args, err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// ok runs a command that must succeed and returns its stdout.
func (c *cli) ok(stdin []byte, args ...string) string {
	c.t.Helper()
	out, errs, code := c.run(stdin, args...)
	if code != 0 {
		c.t.Fatalf("forkspace %s: exit %d\nstderr: %s", strings.Join(args, " "), code, errs)
	}
	return out
}

// json runs a command with --json and decodes its output into v.
func (c *cli) json(v any, args ...string) {
	c.t.Helper()
	out := c.ok(nil, append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("forkspace %s --json: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// fails runs a command that must fail with code, and checks the error
// line's shape.
func (c *cli) fails(code int, stdin []byte, args ...string) string {
	c.t.Helper()
	_, errs, got := c.run(stdin, args...)
	if got != code {
		c.t.Errorf("forkspace %s: exit %d, want %d\nstderr: %s", strings.Join(args, " "), got, code, errs)
	}
	if !strings.HasPrefix(errs, "forkspace: ") {
		c.t.Errorf("forkspace %s: stderr %q lacks the forkspace: prefix", strings.Join(args, " "), errs)
	}
	return errs
}

func TestExitCodeTable(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, exitOK},
		{errors.New("boom"), exitFailure},
		{usage("bad"), exitUsage},
		{&fs.PathError{Op: "open", Path: "x", Err: fs.ErrNotExist}, exitNotFound},
		{fmt.Errorf("create: %w", fs.ErrExist), exitExists},
		{fs.ErrInvalid, exitInvalid},
		{errdefs.ErrNameTooLong, exitInvalid},
		{fmt.Errorf("write: %w", errdefs.ErrQuota), exitQuota},
		{errdefs.ErrReadOnly, exitReadOnly},
		{fs.ErrPermission, exitReadOnly},
		{fmt.Errorf("open store: %w: in use", errdefs.ErrBusy), exitBusy},
		{fmt.Errorf("%w: bad node: %w", errdefs.ErrCorrupt, fs.ErrNotExist), exitCorrupt},
		{&fs.PathError{Op: "remove", Path: "d", Err: errdefs.ErrNotEmpty}, exitNotEmpty},
	}
	for _, tc := range tests {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestExitCodes(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	c.ok(nil, "workspace", "create", "small", "--quota-bytes", "10")
	c.ok(nil, "-w", "w", "mkdir", "d")
	c.ok([]byte("x"), "-w", "w", "put", "-", "d/x")
	c.ok(nil, "-w", "w", "checkpoint", "cp")

	c.fails(exitNotFound, nil, "-w", "missing", "ls")
	c.fails(exitNotFound, nil, "workspace", "info", "missing")
	c.fails(exitNotFound, nil, "-w", "w", "cat", "nope")
	c.fails(exitExists, nil, "workspace", "create", "w")
	c.fails(exitExists, nil, "-w", "w", "mkdir", "d")
	c.fails(exitInvalid, nil, "-w", "w", "cat", "../etc/passwd")
	c.fails(exitInvalid, nil, "workspace", "create", "bad name")
	c.fails(exitQuota, bytes.Repeat([]byte("q"), 100), "-w", "small", "put", "-", "big")
	c.fails(exitReadOnly, []byte("x"), "-w", "w@cp", "put", "-", "y")
	c.fails(exitReadOnly, nil, "-w", "w@cp", "checkpoint")
	c.fails(exitNotEmpty, nil, "-w", "w", "rm", "d")
	c.fails(exitUsage, nil, "no-such-command")
	c.fails(exitUsage, nil, "ls", "--no-such-flag")
	c.fails(exitUsage, nil, "workspace", "create")
	c.fails(exitUsage, nil, "ls")

	if throughServer {
		return // the store is held by the server, and served
	}
	// A store held by another process is busy.
	st, err := forkspace.Open(context.Background(), forkspace.Options{Dir: c.store, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	msg := c.fails(exitBusy, nil, "-w", "w", "ls")
	st.Close()
	if !strings.Contains(msg, "in use") {
		t.Errorf("busy message: %q", msg)
	}
	// No store at all.
	c.fails(exitNotFound, nil, "--store", filepath.Join(c.cwd, "nowhere"), "workspace", "list")
}

// TestReportUnrecordedCall: a call that failed and could not be recorded
// either (a full disk fails both) is reported by its own error on one
// line, not followed by the recorder's "record audit entry …".
func TestReportUnrecordedCall(t *testing.T) {
	var stderr strings.Builder
	a := &app{stderr: &stderr}
	err := errors.Join(fmt.Errorf("write u1.txt: commit transaction: %w", syscall.ENOSPC),
		fmt.Errorf("%w: record audit entry cli.write: commit transaction: %w", audit.ErrNotRecorded, syscall.ENOSPC))
	if code := a.report(err); code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	want := "forkspace: write u1.txt: commit transaction: no space left on device (the call was not recorded in the audit log)\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	// An error wrapping two others that was recorded says nothing of it.
	stderr.Reset()
	a.report(fmt.Errorf("open lnk: %w: %w", fs.ErrNotExist, errors.ErrUnsupported))
	if got := stderr.String(); strings.Contains(got, "not recorded") {
		t.Errorf("a recorded call's error reported as unrecorded: %q", got)
	}
}
