package vfs_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/forkspace/forkspace/vfs"
	"github.com/forkspace/forkspace/vfs/vfstest"
)

// summary renders changes as "op path [<- old] type size/oldsize
// [link=path] [replaced]".
func summary(cs []vfs.Change) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s %s", c.Op, c.Path)
		if c.OldPath != "" {
			fmt.Fprintf(&b, " <- %s", c.OldPath)
		}
		fmt.Fprintf(&b, " %s %d/%d", c.Type, c.Size, c.OldSize)
		if c.Link != "" {
			fmt.Fprintf(&b, " link=%s", c.Link)
		}
		if c.Replaced {
			b.WriteString(" replaced")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestDiff(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		change func(t *testing.T, f *vfs.FS)
		want   string
	}{
		{"nothing", func(t *testing.T, f *vfs.FS) {}, ""},
		{"add file", func(t *testing.T, f *vfs.FS) {
			must(t, f.WriteFile(ctx, "docs/new.md", []byte("hi\n"), 0o644))
		}, "added docs/new.md file 3/0\n"},
		{"add tree", func(t *testing.T, f *vfs.FS) {
			must(t, f.MkdirAll(ctx, "n/m", 0o755))
			must(t, f.WriteFile(ctx, "n/m/f", []byte("f"), 0o644))
			must(t, f.Symlink(ctx, "m/f", "n/l"))
		}, "added n dir 0/0\nadded n/m dir 0/0\nadded n/l symlink 3/0\nadded n/m/f file 1/0\n"},
		{"modify", func(t *testing.T, f *vfs.FS) {
			must(t, f.WriteFile(ctx, "src/a.go", []byte("package a\n\nfunc A() {}\n"), 0o644))
		}, "modified src/a.go file 23/10\n"},
		{"chmod", func(t *testing.T, f *vfs.FS) {
			must(t, f.Chmod(ctx, "src/a.go", 0o600))
			must(t, f.Chmod(ctx, "src", 0o700))
		}, "modified src dir 0/0\nmodified src/a.go file 10/10\n"},
		{"root", func(t *testing.T, f *vfs.FS) {
			must(t, f.Chmod(ctx, ".", 0o700))
		}, "modified . dir 0/0\n"},
		{"xattr", func(t *testing.T, f *vfs.FS) {
			must(t, f.Setxattr(ctx, "docs", "user.x", []byte("1")))
		}, "modified docs dir 0/0\n"},
		{"delete", func(t *testing.T, f *vfs.FS) {
			must(t, f.Remove(ctx, "docs/readme.md"))
		}, "deleted docs/readme.md file 0/6\n"},
		{"delete tree", func(t *testing.T, f *vfs.FS) {
			must(t, f.RemoveAll(ctx, "src"))
		}, "deleted src/sub/b.go file 0/10\ndeleted src/sub dir 0/0\ndeleted src/a.go file 0/10\ndeleted src dir 0/0\n"},
		{"rename file", func(t *testing.T, f *vfs.FS) {
			must(t, f.Rename(ctx, "docs/readme.md", "README.md"))
		}, "renamed README.md <- docs/readme.md file 6/6\n"},
		{"rename dir", func(t *testing.T, f *vfs.FS) {
			must(t, f.Rename(ctx, "src", "lib"))
		}, "renamed lib <- src dir 0/0\n"},
		{"rename dir and edit inside", func(t *testing.T, f *vfs.FS) {
			must(t, f.Rename(ctx, "src", "lib"))
			must(t, f.WriteFile(ctx, "lib/sub/b.go", []byte("package b2\n"), 0o644))
			must(t, f.WriteFile(ctx, "lib/c.go", []byte("package c\n"), 0o644))
		}, "renamed lib <- src dir 0/0\nadded lib/c.go file 10/0\nmodified lib/sub/b.go file 11/10\n"},
		{"replace by rename", func(t *testing.T, f *vfs.FS) {
			must(t, f.Rename(ctx, "src/a.go", "docs/readme.md"))
		}, "deleted docs/readme.md file 0/6\nrenamed docs/readme.md <- src/a.go file 10/10\n"},
		{"replace by new file", func(t *testing.T, f *vfs.FS) {
			must(t, f.WriteFile(ctx, "tmp", []byte("next\n"), 0o644))
			must(t, f.Rename(ctx, "tmp", "docs/readme.md"))
		}, "modified docs/readme.md file 5/6 replaced\n"},
		{"delete and recreate", func(t *testing.T, f *vfs.FS) {
			must(t, f.Remove(ctx, "docs/readme.md"))
			must(t, f.WriteFile(ctx, "docs/readme.md", []byte("again\n"), 0o644))
		}, "modified docs/readme.md file 6/6 replaced\n"},
		{"symlink retarget", func(t *testing.T, f *vfs.FS) {
			must(t, f.Remove(ctx, "link"))
			must(t, f.Symlink(ctx, "src/sub", "link"))
		}, "modified link symlink 7/4 replaced\n"},
		{"hard link", func(t *testing.T, f *vfs.FS) {
			must(t, f.Link(ctx, "src/a.go", "a-link"))
		}, "added a-link file 10/0 link=src/a.go\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, vfs.Options{})
			f := e.open(e.ws)
			must(t, f.MkdirAll(ctx, "src/sub", 0o755))
			must(t, f.Mkdir(ctx, "docs", 0o755))
			must(t, f.WriteFile(ctx, "src/a.go", []byte("package a\n"), 0o644))
			must(t, f.WriteFile(ctx, "src/sub/b.go", []byte("package b\n"), 0o644))
			must(t, f.WriteFile(ctx, "docs/readme.md", []byte("hello\n"), 0o644))
			must(t, f.Symlink(ctx, "docs", "link"))
			root, err := f.Root(ctx)
			must(t, err)
			base := vfs.Snapshot(e.deps, root, nil)
			tt.change(t, f)
			cs, err := vfs.Diff(ctx, base, f, vfs.DiffOptions{})
			must(t, err)
			if got := summary(cs); got != tt.want {
				t.Fatalf("diff:\n%s\nwant:\n%s", got, tt.want)
			}
			// A state does not differ from itself.
			same, err := vfs.Diff(ctx, f, f, vfs.DiffOptions{})
			must(t, err)
			if len(same) != 0 {
				t.Fatalf("self diff:\n%s", summary(same))
			}
		})
	}
}

func TestDiffUnified(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	must(t, f.WriteFile(ctx, "a.txt", []byte("one\ntwo\nthree\n"), 0o644))
	must(t, f.WriteFile(ctx, "bin", []byte("a\x00b"), 0o644))
	must(t, f.WriteFile(ctx, "gone.txt", []byte("bye\n"), 0o644))
	must(t, f.WriteFile(ctx, "moved.txt", []byte("m\n"), 0o644))
	child := e.fork(f, "child")
	// Moved and changed: the rename step has no text, the Modified step
	// after it is labelled with the old path.
	must(t, child.Rename(ctx, "moved.txt", "moved2.txt"))
	must(t, child.WriteFile(ctx, "moved2.txt", []byte("m2\n"), 0o644))
	must(t, child.WriteFile(ctx, "a.txt", []byte("one\n2\nthree\n"), 0o644))
	must(t, child.WriteFile(ctx, "bin", []byte("a\x00c"), 0o644))
	must(t, child.WriteFile(ctx, "new.txt", []byte("fresh\n"), 0o644))
	must(t, child.Remove(ctx, "gone.txt"))
	cs, err := vfs.Diff(ctx, f, child, vfs.DiffOptions{Unified: true})
	must(t, err)
	got := map[string]string{}
	for _, c := range cs {
		if c.Op != vfs.Renamed {
			got[c.Path] = c.Unified
		} else if c.Unified != "" {
			t.Errorf("rename %s has a text diff", c.Path)
		}
	}
	want := map[string]string{
		"a.txt":      "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n",
		"bin":        "",
		"new.txt":    "--- a/new.txt\n+++ b/new.txt\n@@ -0,0 +1 @@\n+fresh\n",
		"gone.txt":   "--- a/gone.txt\n+++ b/gone.txt\n@@ -1 +0,0 @@\n-bye\n",
		"moved2.txt": "--- a/moved.txt\n+++ b/moved2.txt\n@@ -1 +1 @@\n-m\n+m2\n",
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s unified:\n%q\nwant\n%q", p, got[p], w)
		}
	}
	if len(cs) != len(want)+1 { // and the rename
		t.Fatalf("changes:\n%s", summary(cs))
	}
	// The parent is untouched by the diff and by the child's edits.
	if data, _ := f.ReadFile(ctx, "a.txt"); string(data) != "one\ntwo\nthree\n" {
		t.Fatalf("parent changed: %q", data)
	}
}

// TestDiffModel checks Diff against a path-by-path comparison of two
// states after random operations: every path whose type, mode, contents,
// target or xattrs differ is covered by a change (itself, or beneath a
// renamed directory). TestDiffApplies checks the changes themselves.
func TestDiffModel(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{FoldRows: 20})
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		base := e.open(e.ws)
		if n == 1 {
			seed(t, base)
		}
		child := e.fork(base, fmt.Sprintf("diff-%d", n))
		m := &model{rt: rt, e: e, f: child, host: t.TempDir()}
		steps := rapid.IntRange(1, 30).Draw(rt, "steps")
		for range steps {
			m.mutate()
		}
		cs, err := vfs.Diff(ctx, base, child, vfs.DiffOptions{Unified: true})
		must(rt, err)
		before, after := pathState(rt, base), pathState(rt, child)
		covered := func(p string) bool {
			for _, c := range cs {
				if c.Path == p || c.OldPath == p {
					return true
				}
				if c.Op == vfs.Renamed && c.Type == "dir" && (strings.HasPrefix(p, c.Path+"/") || strings.HasPrefix(p, c.OldPath+"/")) {
					return true
				}
			}
			return false
		}
		for p, b := range before {
			if after[p] != b && !covered(p) {
				rt.Fatalf("%s changed (%q -> %q) but diff says:\n%s", p, b, after[p], summary(cs))
			}
		}
		for p, a := range after {
			if _, ok := before[p]; !ok && !covered(p) {
				rt.Fatalf("%s added (%q) but diff says:\n%s", p, a, summary(cs))
			}
		}
	})
}

// seed gives the base state some depth.
func seed(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	for _, d := range []string{"a", "a/b", "b", "c/a"} {
		must(t, f.MkdirAll(ctx, d, 0o755))
	}
	for i, p := range []string{"a/a", "a/b/c", "b/b", "c/a/a", "c/c"} {
		must(t, f.WriteFile(ctx, p, []byte(strings.Repeat("line\n", i+1)), 0o644))
	}
	must(t, f.Symlink(ctx, "a", "c/b"))
}

// pathState describes each path by what Diff must notice: vfstest.State
// without hard-link groups (a new link does not change the file's other
// paths).
func pathState(rt *rapid.T, f *vfs.FS) map[string]string {
	out := vfstest.State(rt, f)
	for p, s := range out {
		out[p], _, _ = strings.Cut(s, " links=")
	}
	return out
}

// TestDiffModifiedThroughMovedPrimaryLink: a file renamed away and linked
// back under its old name keeps that old name as a secondary link; a change
// to its contents is reported there, not hidden behind the new link.
func TestDiffModifiedThroughMovedPrimaryLink(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	must(t, f.WriteFile(ctx, "a", []byte("line\n"), 0o644))
	child := e.fork(f, "child")
	must(t, child.WriteFile(ctx, "a", nil, 0o644))
	must(t, child.Mkdir(ctx, "c", 0o755))
	must(t, child.Rename(ctx, "a", "c/b"))
	must(t, child.Link(ctx, "c/b", "a"))
	cs, err := vfs.Diff(ctx, f, child, vfs.DiffOptions{})
	must(t, err)
	if got, want := summary(cs), "added c dir 0/0\nmodified a file 0/5\nadded c/b file 0/0 link=a\n"; got != want {
		t.Fatalf("diff:\n%s\nwant:\n%s", got, want)
	}
}
