package main

import (
	"strings"
	"testing"
)

// TestBadNamesLeakNothing attacks with names and IDs that name nothing:
// each is exit 3 (not found) with a message that names neither the
// store's directory nor a database internal ("sql: no rows in result set"
// reached users for a missing workspace).
func TestBadNamesLeakNothing(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "a")
	c.ok([]byte("x"), "-w", "a", "put", "-", "x.txt")
	c.ok(nil, "workspace", "create", "gone")
	c.ok(nil, "workspace", "delete", "gone")
	for _, args := range [][]string{
		{"-w", "a", "restore", "cp-nonexistent"},
		{"-w", "a", "restore", "audit:999999"},
		{"diff", "a@audit:999999", "a"},
		{"diff", "a@~999", "a"},
		{"-w", "a@audit:999999", "cat", "x.txt"},
		{"-w", "a", "resolve", "x.txt", "--ours"},
		{"-w", "a", "resolve", "nope", "--ours"},
		{"history", "nosuch"},
		{"history", "gone"},
		{"-w", "gone", "ls"},
		{"workspace", "info", "nosuch"},
		{"workspace", "delete", "nosuch"},
		{"token", "revoke", "tok-nonexistent"},
		{"-w", "a", "cat", "nope"},
		{"merge", "nosuch", "--into", "a"},
	} {
		errs := c.fails(exitNotFound, nil, args...)
		for _, bad := range []string{"sql:", "no rows", c.store} {
			if strings.Contains(errs, bad) {
				t.Errorf("forkspace %s: %q names %q", strings.Join(args, " "), errs, bad)
			}
		}
	}
}
