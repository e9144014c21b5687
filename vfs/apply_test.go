package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/forkspace/forkspace/vfs"
	"github.com/forkspace/forkspace/vfs/vfstest"
)

// TestDiffApplies is the diff contract as a property: for two states a and
// b reached by random operations from a common state (each side changing
// after the fork, so renames land on paths the other side uses), applying
// Diff(a, b) in order to a copy of a yields b, and Diff(b, a) applied to a
// copy of b yields a.
func TestDiffApplies(t *testing.T) {
	e := newEnv(t, vfs.Options{FoldRows: 20})
	base := e.open(e.ws)
	seed(t, base)
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		id := func(s string) string { return fmt.Sprintf("%s-%d", s, n) }
		a := e.fork(base, id("a"))
		b := e.fork(base, id("b"))
		defer closeAll(a, b)
		for _, f := range []*vfs.FS{a, b} {
			m := &model{rt: rt, e: e, f: f}
			for range rapid.IntRange(0, 40).Draw(rt, "steps") {
				// Renames and hard links are the hard part: half of the
				// steps.
				switch rapid.IntRange(0, 9).Draw(rt, "kind") {
				case 0, 1, 2, 3:
					_ = f.Rename(context.Background(), m.path("path"), m.path("to"))
				case 4:
					_ = f.Link(context.Background(), m.path("path"), m.path("to"))
				default:
					m.mutate()
				}
			}
		}
		checkApplies(rt, e, a, b, id("ab"))
		checkApplies(rt, e, b, a, id("ba"))
	})
}

// checkApplies applies Diff(from, to) to a fork of from and compares the
// result with to.
func checkApplies(rt failer, e *env, from, to *vfs.FS, id string) {
	ctx := context.Background()
	cs, err := vfs.Diff(ctx, from, to, vfs.DiffOptions{})
	must(rt, err)
	c := e.fork(from, id)
	defer closeAll(c)
	if err := vfs.ApplyDiff(ctx, c, to, cs); err != nil {
		rt.Fatalf("apply: %v\nchanges:\n%s", err, summary(cs))
	}
	must(rt, c.Check(ctx))
	if d := vfstest.StateDiff(vfstest.State(rt, c), vfstest.State(rt, to)); d != "" {
		rt.Fatalf("after applying: %s\nchanges:\n%s", d, summary(cs))
	}
}

// failer is what checkApplies needs of a testing.TB or *rapid.T.
type failer interface {
	fataler
	Fatalf(format string, args ...any)
}

func closeAll(fs ...*vfs.FS) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// TestDiffAppliesCases are the shapes that need ordering: entries replaced
// by renames, renames onto paths the other side uses, swaps (a cycle,
// broken through a temporary name) and directories moved into directories
// that took their place.
func TestDiffAppliesCases(t *testing.T) {
	ctx := context.Background()
	type fsFunc = func(t *testing.T, f *vfs.FS)
	tests := []struct {
		name       string
		common     fsFunc
		from, to   fsFunc
		want, back string // summaries of Diff(from, to) and Diff(to, from)
	}{
		{
			// Issue 17 case A: a path renamed on one side is a new file on
			// the other.
			name:   "rename onto a path the other side wrote",
			common: func(t *testing.T, f *vfs.FS) { must(t, f.Symlink(ctx, "c", "b")) },
			from:   func(t *testing.T, f *vfs.FS) { must(t, f.Rename(ctx, "b", "a")) },
			to:     func(t *testing.T, f *vfs.FS) { must(t, f.WriteFile(ctx, "a", []byte("x"), 0o644)) },
			want:   "renamed b <- a symlink 1/1\nadded a file 1/0\n",
			back:   "deleted a file 0/1\nrenamed a <- b symlink 1/1\n",
		},
		{
			// Issue 17 case B: a directory renamed over another one whose
			// contents are deleted.
			name: "directory renamed over a directory",
			common: func(t *testing.T, f *vfs.FS) {
				must(t, f.MkdirAll(ctx, "b", 0o755))
				must(t, f.Symlink(ctx, "x", "b/c"))
				must(t, f.MkdirAll(ctx, "c/c", 0o755))
			},
			from: func(t *testing.T, f *vfs.FS) {},
			to: func(t *testing.T, f *vfs.FS) {
				must(t, f.Remove(ctx, "c/c"))
				must(t, f.Rename(ctx, "b", "c"))
			},
			want: "deleted c/c dir 0/0\ndeleted c dir 0/0\nrenamed c <- b dir 0/0\n",
			back: "renamed b <- c dir 0/0\nadded c dir 0/0\nadded c/c dir 0/0\n",
		},
		{
			name: "swap",
			common: func(t *testing.T, f *vfs.FS) {
				must(t, f.WriteFile(ctx, "x", []byte("x"), 0o644))
				must(t, f.WriteFile(ctx, "y", []byte("yy"), 0o644))
			},
			from: func(t *testing.T, f *vfs.FS) {},
			to: func(t *testing.T, f *vfs.FS) {
				must(t, f.Rename(ctx, "x", "t"))
				must(t, f.Rename(ctx, "y", "x"))
				must(t, f.Rename(ctx, "t", "y"))
			},
		},
		{
			name: "directories swap nesting",
			common: func(t *testing.T, f *vfs.FS) {
				must(t, f.MkdirAll(ctx, "a/b", 0o755))
				must(t, f.WriteFile(ctx, "a/b/f", nil, 0o644))
			},
			from: func(t *testing.T, f *vfs.FS) {},
			to: func(t *testing.T, f *vfs.FS) {
				must(t, f.Rename(ctx, "a/b", "b"))
				must(t, f.Rename(ctx, "a", "b/a"))
			},
			want: "renamed b <- a/b dir 0/0\nrenamed b/a <- a dir 0/0\n",
		},
		{
			name: "file into a directory that took its place",
			common: func(t *testing.T, f *vfs.FS) {
				must(t, f.WriteFile(ctx, "a", []byte("a"), 0o644))
				must(t, f.Mkdir(ctx, "d", 0o755))
			},
			from: func(t *testing.T, f *vfs.FS) {},
			to: func(t *testing.T, f *vfs.FS) {
				must(t, f.Rename(ctx, "a", "d/a"))
				must(t, f.Rename(ctx, "d", "a"))
			},
		},
		{
			name: "replaced by another type, hard links kept",
			common: func(t *testing.T, f *vfs.FS) {
				must(t, f.WriteFile(ctx, "f", []byte("old"), 0o644))
				must(t, f.Link(ctx, "f", "g"))
				must(t, f.Symlink(ctx, "f", "l"))
			},
			from: func(t *testing.T, f *vfs.FS) {},
			to: func(t *testing.T, f *vfs.FS) {
				must(t, f.Remove(ctx, "f"))
				must(t, f.Mkdir(ctx, "f", 0o700))
				must(t, f.Remove(ctx, "l"))
				must(t, f.WriteFile(ctx, "l", []byte("now a file"), 0o600))
				must(t, f.WriteFile(ctx, "tmp", []byte("new"), 0o644))
				must(t, f.Rename(ctx, "tmp", "g"))
				must(t, f.Link(ctx, "g", "f/h"))
			},
			want: "deleted l symlink 0/1\ndeleted f file 0/3\nadded f dir 0/0\nadded f/h file 3/0\nmodified g file 3/3 link=f/h replaced\nadded l file 10/0\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, vfs.Options{})
			base := e.open(e.ws)
			tt.common(t, base)
			from, to := e.fork(base, "from"), e.fork(base, "to")
			tt.from(t, from)
			tt.to(t, to)
			for i, dir := range []struct {
				a, b *vfs.FS
				want string
			}{{from, to, tt.want}, {to, from, tt.back}} {
				cs, err := vfs.Diff(ctx, dir.a, dir.b, vfs.DiffOptions{})
				must(t, err)
				if got := summary(cs); dir.want != "" && got != dir.want {
					t.Errorf("diff:\n%s\nwant:\n%s", got, dir.want)
				}
				checkApplies(t, e, dir.a, dir.b, fmt.Sprintf("apply-%d", i))
			}
		})
	}
}

// TestApplyDiffErrors: a step that does not fit the state stops ApplyDiff
// with an error naming the step; an unknown step is fs.ErrInvalid.
func TestApplyDiffErrors(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	must(t, f.WriteFile(ctx, "a", []byte("a"), 0o644))
	err := vfs.ApplyDiff(ctx, f, f, []vfs.Change{{Op: vfs.Deleted, Path: "a"}, {Op: vfs.Deleted, Path: "missing"}})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "step 2 (deleted missing)") {
		t.Fatalf("missing entry: %v", err)
	}
	if _, err := f.Lstat(ctx, "a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("step 1 not applied: %v", err)
	}
	if err := vfs.ApplyDiff(ctx, f, f, []vfs.Change{{Op: 0, Path: "x"}}); !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf("unknown step: %v", err)
	}
}
