package main

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/storecopy"
)

// Exit codes. Scripts may rely on them; docs/cli.md lists them.
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitNotFound = 3
	exitExists   = 4
	exitInvalid  = 5
	exitQuota    = 6
	exitReadOnly = 7
	exitBusy     = 8
	exitCorrupt  = 9
	exitNotEmpty = 10
	exitConflict = 11
	exitLost     = 12 // a salvage left something behind (store copy --salvage)
)

// exitCodes maps error classes to exit codes, first match wins: the more
// specific conditions come before the generic ones they may also wrap.
var exitCodes = []struct {
	err  error
	code int
}{
	{storecopy.ErrLost, exitLost},
	{errdefs.ErrBusy, exitBusy},
	{errdefs.ErrCorrupt, exitCorrupt},
	{errdefs.ErrConflict, exitConflict},
	{errdefs.ErrQuota, exitQuota},
	{errdefs.ErrReadOnly, exitReadOnly},
	{fs.ErrPermission, exitReadOnly},
	{errdefs.ErrNotEmpty, exitNotEmpty},
	{fs.ErrNotExist, exitNotFound},
	{fs.ErrExist, exitExists},
	{fs.ErrInvalid, exitInvalid},
	{errdefs.ErrNameTooLong, exitInvalid},
	{errdefs.ErrNotDir, exitInvalid},
	{errdefs.ErrIsDir, exitInvalid},
	{errdefs.ErrLoop, exitInvalid},
}

// usageError marks a command line the CLI could not make sense of.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// exitCode classifies err.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	if errors.As(err, new(usageError)) {
		return exitUsage
	}
	if st := (exitStatus{}); errors.As(err, &st) {
		return st.code
	}
	for _, c := range exitCodes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return exitFailure
}

// report prints err (if any) as "forkspace: <op> <path>: <cause>" and
// returns the exit code.
func (a *app) report(err error) int {
	code := exitCode(err)
	if err != nil && !errors.As(err, new(exitStatus)) {
		if call := audit.CallError(err); call != nil && call != err {
			// The call failed, and so did recording it (a full disk
			// fails both): its own error is the one to read.
			err = fmt.Errorf("%w (the call was not recorded in the audit log)", call)
		}
		fmt.Fprintf(a.stderr, "forkspace: %v\n", err)
		if code == exitUsage {
			fmt.Fprintln(a.stderr, "Run 'forkspace --help' for usage.")
		}
	}
	return code
}

// usage wraps a command-line mistake found by a command itself.
func usage(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}
