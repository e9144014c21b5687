package main

import (
	"context"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/vfs"
	"github.com/forkspace/forkspace/vfs/vfstest"
)

// TestDiffJSONApplies: the changes `forkspace diff --json` prints, decoded
// and applied in order (vfs.ApplyDiff) to a fork of the from state, yield
// the to state, in both directions, for the cases that need the order.
// Each script line is an operation: mkdir P, write P DATA, rm P, mv A B,
// ln A B (hard link), sym TARGET P, chmod P MODE, xattr P NAME VALUE.
func TestDiffJSONApplies(t *testing.T) {
	cases := []struct{ name, common, from, to string }{
		{"issue 17 case A", "sym c b", "mv b a", "write a x"},
		{"issue 17 case B", "mkdir b; sym x b/c; mkdir c; mkdir c/c", "", "rm c/c; mv b c"},
		{"swap", "write x 1; write y 22", "", "mv x t; mv y x; mv t y"},
		{"nested directories swap", "mkdir a; mkdir a/b; write a/b/f f", "", "mv a/b b; mv a b/a"},
		{"replaced entries and links", "write f old; ln f g; sym f l; mkdir d; write d/e e",
			"chmod f 600", "rm f; mkdir f; rm l; write l file; write tmp new; mv tmp g; ln g f/h; rm d/e; rm d; write d x; xattr f user.k v"},
	}
	c := newCLI(t)
	ctx := context.Background()
	st := c.openStore()
	for i, tc := range cases {
		base, err := st.Create(ctx, fmt.Sprintf("base%d", i), forkspace.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		script(t, base.FS, tc.common)
		for side, ops := range map[string]string{"from": tc.from, "to": tc.to} {
			w, err := base.Fork(ctx, fmt.Sprintf("%s%d", side, i), forkspace.ForkOptions{})
			if err != nil {
				t.Fatal(err)
			}
			script(t, w.FS, ops)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for i, tc := range cases {
		for _, dir := range [][2]string{{"from", "to"}, {"to", "from"}} {
			from, to := fmt.Sprintf("%s%d", dir[0], i), fmt.Sprintf("%s%d", dir[1], i)
			var changes []vfs.Change
			c.json(&changes, "diff", from, to)
			st := c.openStore()
			applied, err := st.Workspace(ctx, from)
			if err == nil {
				applied, err = applied.Fork(ctx, "applied-"+from, forkspace.ForkOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := st.Snapshot(ctx, to)
			if err != nil {
				t.Fatal(err)
			}
			if err := vfs.ApplyDiff(ctx, applied.FS, want, changes); err != nil {
				t.Errorf("%s: apply diff %s %s: %v\n%+v", tc.name, from, to, err, changes)
			} else if d := vfstest.StateDiff(vfstest.State(t, applied.FS), vfstest.State(t, want)); d != "" {
				t.Errorf("%s: diff %s %s applied: %s\n%+v", tc.name, from, to, d, changes)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// openStore opens c's store in this process (the binary must not run
// meanwhile: one process at a time).
func (c *cli) openStore() *forkspace.Store {
	c.t.Helper()
	st, err := forkspace.Open(context.Background(), forkspace.Options{Dir: c.store})
	if err != nil {
		c.t.Fatal(err)
	}
	return st
}

// script runs the ";"-separated operations of TestDiffJSONApplies on f.
func script(t *testing.T, f *vfs.FS, ops string) {
	t.Helper()
	ctx := context.Background()
	for op := range strings.SplitSeq(ops, ";") {
		a := strings.Fields(op)
		if len(a) == 0 {
			continue
		}
		var err error
		switch a[0] {
		case "mkdir":
			err = f.Mkdir(ctx, a[1], 0o755)
		case "write":
			err = f.WriteFile(ctx, a[1], []byte(a[2]), 0o644)
		case "rm":
			err = f.Remove(ctx, a[1])
		case "mv":
			err = f.Rename(ctx, a[1], a[2])
		case "ln":
			err = f.Link(ctx, a[1], a[2])
		case "sym":
			err = f.Symlink(ctx, a[1], a[2])
		case "chmod":
			var mode uint64
			if mode, err = strconv.ParseUint(a[2], 8, 32); err == nil {
				err = f.Chmod(ctx, a[1], fs.FileMode(mode))
			}
		case "xattr":
			err = f.Setxattr(ctx, a[1], a[2], []byte(a[3]))
		default:
			t.Fatalf("script: unknown operation %q", op)
		}
		if err != nil {
			t.Fatalf("script %q: %v", op, err)
		}
	}
}
