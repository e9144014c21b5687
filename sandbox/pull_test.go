package sandbox

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	forkspace "github.com/forkspace/forkspace"

	"github.com/forkspace/forkspace/internal/sandboxtest"
	"github.com/forkspace/forkspace/provider"
)

// TestPullEveryKind runs commands that change the work dir in every way
// the pull handles and checks the workspace ends up equal to the work dir,
// with the expected change list.
// listTree lists the work dir: every entry's path, type, mode and link
// target, then every file's MD5.
const listTree = `find . -mindepth 1 -printf '%p %y %m %l\n' | sort; find . -type f -exec md5sum {} + | sort`

func TestPullEveryKind(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, s *Shell)
		command string
		want    []provider.Change
	}{
		{name: "create file", command: "echo new > n.txt",
			want: []provider.Change{{Path: "n.txt", Op: opCreated}}},
		{name: "modify file", command: "echo more >> a.txt",
			want: []provider.Change{{Path: "a.txt", Op: opModified}}},
		{name: "same-size rewrite right after materialization", command: "printf 'hello\\n' > a.txt; printf 'HELLO\\n' > a.txt",
			want: []provider.Change{{Path: "a.txt", Op: opModified}}},
		{name: "delete file", command: "rm a.txt",
			want: []provider.Change{{Path: "a.txt", Op: opDeleted}}},
		{name: "chmod", command: "chmod 755 a.txt",
			want: []provider.Change{{Path: "a.txt", Op: opModified}}},
		{name: "touch mtime only", command: "touch -d '2001-02-03 04:05:06' a.txt",
			want: []provider.Change{{Path: "a.txt", Op: opModified}}},
		{name: "nested directories", command: "mkdir -p x/y/z && echo deep > x/y/z/f",
			want: []provider.Change{{Path: "x", Op: opCreated}, {Path: "x/y", Op: opCreated}, {Path: "x/y/z", Op: opCreated}, {Path: "x/y/z/f", Op: opCreated}}},
		{name: "remove tree", command: "rm -r d",
			want: []provider.Change{{Path: "d", Op: opDeleted}}},
		{name: "directory mode", command: "chmod 700 d",
			want: []provider.Change{{Path: "d", Op: opModified}}},
		{name: "symlinks verbatim", command: "ln -s a.txt rel && ln -s /etc/hostname abs && ln -s ../../outside up",
			want: []provider.Change{{Path: "abs", Op: opCreated}, {Path: "rel", Op: opCreated}, {Path: "up", Op: opCreated}}},
		{name: "retarget symlink", command: "ln -sfn d/f.txt link",
			want: []provider.Change{{Path: "link", Op: opModified}}},
		{name: "file becomes directory", command: "rm a.txt && mkdir a.txt && echo in > a.txt/f",
			want: []provider.Change{{Path: "a.txt", Op: opModified}, {Path: "a.txt/f", Op: opCreated}}},
		{name: "directory becomes file", command: "rm -r d && echo flat > d",
			want: []provider.Change{{Path: "d", Op: opModified}}},
		{name: "rename", command: "mv d e",
			want: []provider.Change{{Path: "d", Op: opDeleted}, {Path: "e", Op: opCreated}, {Path: "e/f.txt", Op: opCreated}}},
		{name: "binary and empty files", command: "head -c 100000 /dev/urandom > bin && : > empty",
			want: []provider.Change{{Path: "bin", Op: opCreated}, {Path: "empty", Op: opCreated}}},
		{name: "nothing", command: "cat a.txt d/f.txt > /dev/null"},
	}
	needBwrap(t)
	st, _ := newWorkspace(t)
	for _, mode := range []string{"watch", "walk", string(ModeFUSE)} {
		for i, tc := range tests {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				ws, err := st.Create(context.Background(), fmt.Sprint(mode, i), forkspace.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				opts := Options{WorkDir: sandboxtest.WorkDir(t), Mode: ModeCopy}
				if mode == string(ModeFUSE) {
					opts.Mode = ModeFUSE
				}
				s := New(ws, opts)
				s.st.walkOnly = mode == "walk"
				writeWS(t, ws, "a.txt", "hello\n", 0o644)
				writeWS(t, ws, "d/f.txt", "in d\n", 0o600)
				if err := ws.Symlink(context.Background(), "a.txt", "link"); err != nil {
					t.Fatal(err)
				}
				command := tc.command
				if opts.Mode == ModeFUSE {
					// No work dir to compare with: the command lists what it
					// left, and a run in a materialized copy of the workspace
					// must list the same.
					command += "\necho ===\n" + listTree
				}
				res := mustExec(t, s, command)
				if res.ExitCode != 0 {
					t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr)
				}
				if !slices.Equal(res.Changed, tc.want) {
					t.Errorf("Changed = %v, want %v", res.Changed, tc.want)
				}
				sameTree(t, s, ws)
				if opts.Mode == ModeFUSE {
					_, left, _ := strings.Cut(res.Stdout, "===\n")
					c := New(ws, Options{WorkDir: sandboxtest.WorkDir(t), Mode: ModeCopy})
					defer c.Close()
					if got := mustExec(t, c, listTree).Stdout; got != left {
						t.Errorf("the command left\n%s\nthe workspace holds\n%s", left, got)
					}
				}
				// A second run sees the pulled state and changes nothing.
				if res := mustExec(t, s, "true"); len(res.Changed) != 0 || s.Stats().Written != 0 {
					t.Errorf("second run: Changed %v, stats %+v", res.Changed, s.Stats())
				}
				sameTree(t, s, ws)
			})
		}
	}
}
