package forkspace_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/merge"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
	"github.com/forkspace/forkspace/vfs"
)

// openWithMeta opens a store on a metadata database the test reads too
// (SQLite; PostgreSQL in the second pass).
func openWithMeta(t *testing.T) (*forkspace.Store, meta.Store) {
	t.Helper()
	dir := t.TempDir()
	o, err := passOptions(t, forkspace.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if o.Meta == nil {
		if o.Meta, err = sqlitemeta.Open(context.Background(), dir+"/meta.db", sqlitemeta.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	m := o.Meta
	st, err := forkspace.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, m
}

func mustFork(t *testing.T, w *forkspace.Workspace, name string) *forkspace.Workspace {
	t.Helper()
	f, err := w.Fork(context.Background(), name, forkspace.ForkOptions{})
	if err != nil {
		t.Fatalf("fork %s: %v", name, err)
	}
	return f
}

func mustMerge(t *testing.T, w *forkspace.Workspace, from string, opts forkspace.MergeOptions) forkspace.MergeResult {
	t.Helper()
	r, err := w.Merge(context.Background(), from, opts)
	if err != nil {
		t.Fatalf("merge %s into %s: %v", from, w.Name(), err)
	}
	return r
}

// files returns every file and symbolic link of f with its contents (a
// link's target), and every directory as "<dir>".
func files(t *testing.T, f *vfs.FS) map[string]string {
	t.Helper()
	out, err := stateFiles(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMergeForkIntoParent(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	p := mustCreate(t, st, "p")
	write(t, p, "a.txt", "1\n2\n3\n4\n5\n")
	write(t, p, "keep", "k")
	write(t, p, "gone", "g")
	write(t, p, "dir/x", "x")
	f := mustFork(t, p, "f")
	// theirs (f): edit line 1, add a file, delete one, rename a directory
	write(t, f, "a.txt", "one\n2\n3\n4\n5\n")
	write(t, f, "new", "n")
	if err := f.Remove(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := f.Rename(ctx, "dir", "moved"); err != nil {
		t.Fatal(err)
	}
	// ours (p): edit line 5, and the file in the directory theirs moved
	write(t, p, "a.txt", "1\n2\n3\n4\nfive\n")
	write(t, p, "dir/x", "x2")
	r := mustMerge(t, p, "f", forkspace.MergeOptions{})
	if len(r.Conflicts) != 0 {
		t.Fatalf("conflicts: %+v", r.Conflicts)
	}
	want := map[string]string{"a.txt": "one\n2\n3\n4\nfive\n", "keep": "k", "new": "n", "moved": "<dir>", "moved/x": "x2"}
	if got := files(t, p.FS); !equalMaps(got, want) {
		t.Fatalf("merged:\n%v\nwant\n%v", got, want)
	}
	// The checkpoint taken first holds ours as it was.
	view, err := p.At(ctx, r.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, view, "a.txt"); got != "1\n2\n3\n4\nfive\n" {
		t.Fatalf("checkpoint before the merge reads %q", got)
	}
	// Merging again changes nothing: the merged state is the new base.
	write(t, f, "later", "l")
	r = mustMerge(t, p, "f", forkspace.MergeOptions{})
	if len(r.Conflicts) != 0 || !slices.Equal(r.Changed, []string{"later"}) {
		t.Fatalf("second merge: changed %v, conflicts %+v", r.Changed, r.Conflicts)
	}
	// And back into the fork: f gets p's edit of line 5 and of moved/x.
	r = mustMerge(t, f, "p", forkspace.MergeOptions{})
	if len(r.Conflicts) != 0 {
		t.Fatalf("merge back: %+v", r.Conflicts)
	}
	want["later"] = "l"
	if got := files(t, f.FS); !equalMaps(got, want) {
		t.Fatalf("fork after merging back:\n%v\nwant\n%v", got, want)
	}
}

// TestMergeDeleteDirectoryOursMovedInto: ours moved a file into a
// directory; theirs deleted both the file and the directory. The
// directory holds nothing theirs keeps, so it goes without a conflict
// (found by TestMergeMatchesModel: the file, deleted later in theirs'
// script, was still in the directory when its deletion was checked).
func TestMergeDeleteDirectoryOursMovedInto(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	p := mustCreate(t, st, "p")
	write(t, p, "a", "7")
	write(t, p, "b/a", "3")
	f := mustFork(t, p, "f")
	if err := p.Rename(ctx, "a", "b/y"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b/a", "b"} {
		if err := f.Remove(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	r := mustMerge(t, p, "f", forkspace.MergeOptions{})
	if len(r.Conflicts) != 0 {
		t.Fatalf("conflicts: %+v", r.Conflicts)
	}
	if got := files(t, p.FS); len(got) != 0 {
		t.Fatalf("merged: %v, want nothing", got)
	}
	// What ours changed in the directory still clashes.
	write(t, p, "c/x", "x")
	write(t, p, "c/y", "y")
	h := mustFork(t, p, "h")
	if err := p.Rename(ctx, "c/x", "c/z"); err != nil {
		t.Fatal(err)
	}
	write(t, p, "c/y", "y2")
	for _, name := range []string{"c/x", "c/y", "c"} {
		if err := h.Remove(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	r = mustMerge(t, p, "h", forkspace.MergeOptions{})
	if len(r.Conflicts) == 0 {
		t.Fatalf("no conflict for a directory theirs deleted with ours' change in it; files %v", files(t, p.FS))
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestMergeSiblingsAndGrandchildren(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	p := mustCreate(t, st, "p")
	write(t, p, "f", "base\n")
	a := mustFork(t, p, "a")
	write(t, p, "p-only", "later") // not in a's base
	b := mustFork(t, p, "b")
	c := mustFork(t, b, "c") // a grandchild
	write(t, a, "from-a", "a")
	write(t, c, "from-c", "c")
	for _, pair := range [][2]string{{"a", "b"}, {"a", "c"}, {"c", "a"}} {
		base, err := st.MergeBase(ctx, pair[0], pair[1])
		if err != nil {
			t.Fatalf("merge base of %s and %s: %v", pair[0], pair[1], err)
		}
		if got := read(t, snapshot(t, st, base), "f"); got != "base\n" {
			t.Fatalf("base of %v reads %q", pair, got)
		}
	}
	mustMerge(t, a, "c", forkspace.MergeOptions{})
	want := map[string]string{"f": "base\n", "from-a": "a", "from-c": "c", "p-only": "later"}
	if got := files(t, a.FS); !equalMaps(got, want) {
		t.Fatalf("a after merging c:\n%v\nwant\n%v", got, want)
	}
	_ = c
}

func snapshot(t *testing.T, st *forkspace.Store, state string) *vfs.FS {
	t.Helper()
	f, err := st.Snapshot(context.Background(), state)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestMergeConflicts(t *testing.T) {
	ctx := context.Background()
	st, m := openWithMeta(t)
	p := mustCreate(t, st, "p")
	write(t, p, "text", "a\nb\nc\n")
	write(t, p, "bin", "\x00base")
	write(t, p, "delmod", "d")
	write(t, p, "clash/x", "x")
	write(t, p, "clean", "c")
	f := mustFork(t, p, "f")
	write(t, p, "text", "a\nOURS\nc\n")
	write(t, f, "text", "a\nTHEIRS\nc\n")
	write(t, p, "bin", "\x00ours")
	write(t, f, "bin", "\x00theirs")
	write(t, p, "delmod", "ours")
	if err := f.Remove(ctx, "delmod"); err != nil {
		t.Fatal(err)
	}
	if err := p.RemoveAll(ctx, "clash"); err != nil {
		t.Fatal(err)
	}
	write(t, p, "clash", "a file now")
	write(t, f, "clash/x", "x2")
	write(t, f, "clean", "theirs")
	before := files(t, p.FS)

	// fail: nothing changes, the conflicts are reported.
	r, err := p.Merge(ctx, "f", forkspace.MergeOptions{Policy: forkspace.MergeFail})
	if !errors.Is(err, errdefs.ErrConflict) {
		t.Fatalf("merge --fail: %v", err)
	}
	kinds := map[string]string{}
	for _, c := range r.Conflicts {
		kinds[c.Path] = c.Kind
	}
	wantKinds := map[string]string{"text": merge.Content, "bin": merge.Binary, "delmod": merge.DeleteModify, "clash": merge.DirectoryFile}
	if !equalMaps(kinds, wantKinds) {
		t.Fatalf("conflicts %v, want %v", kinds, wantKinds)
	}
	if got := files(t, p.FS); !equalMaps(got, before) {
		t.Fatalf("merge --fail changed the workspace:\n%v\nwas\n%v", got, before)
	}
	if cps, _ := p.Checkpoints(ctx); len(cps) != 0 {
		t.Fatalf("merge --fail took a checkpoint: %+v", cps)
	}

	// record: the rest applies, conflicts are rows, ours stays.
	r = mustMerge(t, p, "f", forkspace.MergeOptions{})
	if len(r.Conflicts) != 4 {
		t.Fatalf("conflicts: %+v", r.Conflicts)
	}
	if got := read(t, p.FS, "clean"); got != "theirs" {
		t.Fatalf("clean change not merged: %q", got)
	}
	if got := read(t, p.FS, "text"); got != "a\nOURS\nc\n" {
		t.Fatalf("conflicting file changed: %q", got)
	}
	info, err := p.Info(ctx)
	if err != nil || info.Conflicts != 4 {
		t.Fatalf("info conflicts = %d, %v", info.Conflicts, err)
	}
	// resolve one by one
	if err := p.Resolve(ctx, "text", forkspace.Resolution{Take: forkspace.TakeMarkers}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p.FS, "text"); got != "a\n<<<<<<< p\nOURS\n||||||| base\nb\n=======\nTHEIRS\n>>>>>>> f\nc\n" {
		t.Fatalf("markers: %q", got)
	}
	if err := p.Resolve(ctx, "bin", forkspace.Resolution{Take: forkspace.TakeTheirs}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p.FS, "bin"); got != "\x00theirs" {
		t.Fatalf("theirs: %q", got)
	}
	if err := p.Resolve(ctx, "delmod", forkspace.Resolution{Take: forkspace.TakeContent, Content: []byte("mine")}); err != nil {
		t.Fatal(err)
	}
	if err := p.Resolve(ctx, "nope", forkspace.Resolution{Take: forkspace.TakeOurs}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("resolve of a path without conflict: %v", err)
	}
	if err := p.Resolve(ctx, "clash", forkspace.Resolution{Take: forkspace.TakeOurs}); err != nil {
		t.Fatal(err)
	}
	if cs, err := p.Conflicts(ctx); err != nil || len(cs) != 0 {
		t.Fatalf("conflicts left: %+v, %v", cs, err)
	}
	// the kept versions went with the last conflict
	err = m.View(ctx, func(tx meta.Tx) error {
		cps, err := tx.Checkpoints(p.ID())
		for _, c := range cps {
			if c.Kind == meta.CheckpointConflict {
				t.Errorf("conflict version %s left", c.ID)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestMergePolicies(t *testing.T) {
	st := openStore(t, t.TempDir())
	for _, policy := range []forkspace.MergePolicy{forkspace.MergeOurs, forkspace.MergeTheirs} {
		p := mustCreate(t, st, "p-"+string(policy))
		write(t, p, "f", "base")
		write(t, p, "g", "base")
		f := mustFork(t, p, "f-"+string(policy))
		write(t, p, "f", "ours")
		write(t, f, "f", "theirs")
		write(t, f, "g", "theirs")
		r := mustMerge(t, p, f.Name(), forkspace.MergeOptions{Policy: policy})
		if len(r.Conflicts) != 1 || r.Conflicts[0].Resolved != string(policy) {
			t.Fatalf("%s: %+v", policy, r.Conflicts)
		}
		if got := read(t, p.FS, "f"); got != string(policy) {
			t.Fatalf("%s: f = %q", policy, got)
		}
		if got := read(t, p.FS, "g"); got != "theirs" {
			t.Fatalf("%s: g = %q", policy, got)
		}
		if cs, _ := p.Conflicts(context.Background()); len(cs) != 0 {
			t.Fatalf("%s recorded conflicts: %+v", policy, cs)
		}
	}
}

func TestMergeBaseMissing(t *testing.T) {
	st := openStore(t, t.TempDir())
	a := mustCreate(t, st, "a")
	mustCreate(t, st, "b")
	_, err := a.Merge(context.Background(), "b", forkspace.MergeOptions{})
	if !errors.Is(err, forkspace.ErrNoMergeBase) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("merge of unrelated workspaces: %v", err)
	}
}

func TestCherryPick(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	p := mustCreate(t, st, "p")
	write(t, p, "a/x", "1\n2\n3\n")
	write(t, p, "a/gone", "g")
	write(t, p, "b/y", "y")
	f := mustFork(t, p, "f")
	write(t, f, "a/x", "1\n2\nthree\n")
	write(t, f, "a/new", "n")
	if err := f.Remove(ctx, "a/gone"); err != nil {
		t.Fatal(err)
	}
	write(t, f, "b/y", "y2")
	write(t, p, "a/x", "one\n2\n3\n")

	// Changes under a: merged three-way, b untouched.
	r, err := p.CherryPick(ctx, "f", []string{"a"}, forkspace.CherryPickOptions{Changes: true})
	if err != nil || len(r.Conflicts) != 0 {
		t.Fatalf("cherry-pick changes: %+v, %v", r, err)
	}
	want := map[string]string{"a": "<dir>", "a/x": "one\n2\nthree\n", "a/new": "n", "b": "<dir>", "b/y": "y"}
	if got := files(t, p.FS); !equalMaps(got, want) {
		t.Fatalf("after picking the changes under a:\n%v\nwant\n%v", got, want)
	}
	// A cherry-pick records no merged state: a merge still brings the rest.
	mustMerge(t, p, "f", forkspace.MergeOptions{})
	want["b/y"] = "y2"
	if got := files(t, p.FS); !equalMaps(got, want) {
		t.Fatalf("after merging the rest:\n%v\nwant\n%v", got, want)
	}

	// Paths as they are in the source, whole.
	write(t, f, "b/z", "z")
	before := files(t, p.FS)
	if _, err := p.CherryPick(ctx, "f", []string{"b", "missing"}, forkspace.CherryPickOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("picking a path neither has: %v", err)
	}
	if got := files(t, p.FS); !equalMaps(got, before) {
		t.Fatal("a failed cherry-pick changed the workspace")
	}
	if _, err := p.CherryPick(ctx, "f", []string{"/b/", "a/x"}, forkspace.CherryPickOptions{}); err != nil {
		t.Fatal(err)
	}
	want["b/z"], want["a/x"] = "z", "1\n2\nthree\n"
	if got := files(t, p.FS); !equalMaps(got, want) {
		t.Fatalf("after picking b and a/x:\n%v\nwant\n%v", got, want)
	}
	if _, err := p.CherryPick(ctx, "f", []string{"."}, forkspace.CherryPickOptions{}); !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf("picking the root: %v", err)
	}
}

func TestRestorePaths(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	w := mustCreate(t, st, "w")
	write(t, w, "keep", "1")
	write(t, w, "back", "1")
	write(t, w, "d/x", "1")
	if _, err := w.Checkpoint(ctx, "cp"); err != nil {
		t.Fatal(err)
	}
	write(t, w, "keep", "2")
	write(t, w, "back", "2")
	write(t, w, "d/new", "2")
	write(t, w, "later", "2")
	r, err := w.RestorePaths(ctx, "cp", []string{"back", "d", "later"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"keep": "2", "back": "1", "d": "<dir>", "d/x": "1"}
	if got := files(t, w.FS); !equalMaps(got, want) {
		t.Fatalf("after restoring some paths:\n%v\nwant\n%v", got, want)
	}
	view, err := w.At(ctx, r.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, view, "later"); got != "2" {
		t.Fatalf("the checkpoint before the restore reads %q", got)
	}
}

// TestMergeSpecialFiles: a FIFO one side adds and a device whose number
// one side changes merge like files; both sides changing it clash.
func TestMergeSpecialFiles(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	p := mustCreate(t, st, "p")
	if err := p.Mknod(ctx, "dev", fs.ModeDevice|fs.ModeCharDevice|0o600, 1<<8|3); err != nil {
		t.Fatal(err)
	}
	f := mustFork(t, p, "f")
	if err := f.Mknod(ctx, "fifo", fs.ModeNamedPipe|0o644, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Remove(ctx, "dev"); err != nil {
		t.Fatal(err)
	}
	if err := f.Mknod(ctx, "dev", fs.ModeDevice|fs.ModeCharDevice|0o600, 1<<8|5); err != nil {
		t.Fatal(err)
	}
	r := mustMerge(t, p, "f", forkspace.MergeOptions{})
	if len(r.Conflicts) != 0 {
		t.Fatalf("conflicts: %+v", r.Conflicts)
	}
	for name, want := range map[string]fs.FileMode{"fifo": fs.ModeNamedPipe, "dev": fs.ModeDevice} {
		fi, err := p.Lstat(ctx, name)
		if err != nil || fi.Mode()&want == 0 {
			t.Fatalf("%s after the merge: %v, %v", name, fi, err)
		}
	}
	if rdev := mustLstat(t, p.FS, "dev").Sys().(*vfs.Attr).Rdev; rdev != 1<<8|5 {
		t.Fatalf("device number %d after the merge", rdev)
	}
}

func mustLstat(t *testing.T, f *vfs.FS, name string) fs.FileInfo {
	t.Helper()
	fi, err := f.Lstat(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// TestMergeSkipsMounts: what a fork's copy of a mount shows (indexed at
// another time than ours) is not merged into ours' mount: a merge of the
// fork carries the fork's own changes and leaves ours' mount alone (it
// failed with "mkdir host: read-only: /host is a mount point").
func TestMergeSkipsMounts(t *testing.T) {
	host := t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "notes.md"), []byte("host notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, w := hostMounted(t, t.TempDir(), host, "", "w")
	defer st.Close()
	f := mustFork(t, w, "f")
	if got := read(t, f.FS, "host/notes.md"); got != "host notes" {
		t.Fatalf("the fork's mount reads %q", got)
	}
	write(t, f, "mine.txt", "from the fork")
	r := mustMerge(t, w, "f", forkspace.MergeOptions{})
	if len(r.Conflicts) != 0 || !slices.Equal(r.Changed, []string{"mine.txt"}) {
		t.Fatalf("merge: changed %v, conflicts %+v", r.Changed, r.Conflicts)
	}
	if got := read(t, w.FS, "host/notes.md"); got != "host notes" {
		t.Fatalf("ours' mount after the merge reads %q", got)
	}
}

// TestResolveOursKeepsWhatOursHasThere: theirs moved a file to where ours
// made a directory; resolving the clash with ours keeps ours' directory
// (ours' version named the file's place in ours, so resolving put the
// file there; found by TestMergeMatchesModel).
func TestResolveOursKeepsWhatOursHasThere(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	p := mustCreate(t, st, "p")
	write(t, p, "x", "the file")
	f := mustFork(t, p, "f")
	write(t, p, "a/inside", "ours")
	if err := f.Rename(ctx, "x", "a"); err != nil {
		t.Fatal(err)
	}
	r := mustMerge(t, p, "f", forkspace.MergeOptions{})
	if len(r.Conflicts) != 1 || r.Conflicts[0].Path != "a" || r.Conflicts[0].Ours.Path != "a" {
		t.Fatalf("conflicts: %+v", r.Conflicts)
	}
	if err := p.Resolve(ctx, "a", forkspace.Resolution{Take: forkspace.TakeOurs}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p.FS, "a/inside"); got != "ours" {
		t.Fatalf("a/inside after resolving with ours: %q", got)
	}
}

// TestMergeFollowsMovesAbove: ours moved a file under a directory that
// theirs moved, and theirs changed the file: the change lands on the
// file at its place under the moved directory (it was a conflict "ours
// has a  at a/c/a": the file was looked for where ours had put it,
// before theirs' move; found by TestMergeMatchesModel).
func TestMergeFollowsMovesAbove(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	p := mustCreate(t, st, "p")
	write(t, p, "a/keep", "k")
	write(t, p, "c/x", "old")
	f := mustFork(t, p, "f")
	write(t, p, "a/c/.keep", "")
	if err := p.Rename(ctx, "c/x", "a/c/a"); err != nil {
		t.Fatal(err)
	}
	write(t, f, "c/b/.keep", "")
	if err := f.Rename(ctx, "a", "c/b/y"); err != nil {
		t.Fatal(err)
	}
	write(t, f, "c/x", "new")
	r := mustMerge(t, p, "f", forkspace.MergeOptions{})
	if len(r.Conflicts) != 0 {
		t.Fatalf("conflicts: %+v", r.Conflicts)
	}
	if got := read(t, p.FS, "c/b/y/c/a"); got != "new" {
		t.Fatalf("c/b/y/c/a = %q; files %v", got, files(t, p.FS))
	}
}

// TestMergeParksWhatTheirsMovesLater: ours renamed directory b to a;
// theirs made a new directory a/a and moved file b/a into it as a/a/x. In
// the merged state the file sits at a/a when theirs' new directory comes
// there, and theirs' move of the file comes later: the file is set aside
// and moved on, not a directory/file conflict (found by
// TestMergeMatchesModel).
func TestMergeParksWhatTheirsMovesLater(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	p := mustCreate(t, st, "p")
	write(t, p, "b/a", "file")
	f := mustFork(t, p, "f")
	if err := p.Rename(ctx, "b", "a"); err != nil {
		t.Fatal(err)
	}
	if err := f.MkdirAll(ctx, "a/a", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := f.Rename(ctx, "b/a", "a/a/x"); err != nil {
		t.Fatal(err)
	}
	r := mustMerge(t, p, "f", forkspace.MergeOptions{})
	if len(r.Conflicts) != 0 {
		t.Fatalf("conflicts: %+v", r.Conflicts)
	}
	if got := read(t, p.FS, "a/a/x"); got != "file" {
		t.Fatalf("a/a/x = %q; files %v", got, files(t, p.FS))
	}
	for p := range files(t, p.FS) {
		if strings.Contains(p, ".forkspace-move") {
			t.Fatalf("a parked entry is left behind: %s", p)
		}
	}
}

// TestMergeSameMoveIntoNewDirectory: both sides move directory c to c/x,
// into a new directory made where it was (a move that theirs' diff
// makes by way of a temporary name): the same rename on both sides, no
// conflict, and the merged tree is either side's (found by
// TestMergeMatchesModel, seed 15899286435089653891).
func TestMergeSameMoveIntoNewDirectory(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	p := mustCreate(t, st, "p")
	write(t, p, "c/b/f", "1")
	f := mustFork(t, p, "f")
	for _, w := range []*forkspace.Workspace{p, f} {
		if err := w.Rename(ctx, "c", "tmp"); err != nil {
			t.Fatal(err)
		}
		if err := w.Mkdir(ctx, "c", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := w.Rename(ctx, "tmp", "c/x"); err != nil {
			t.Fatal(err)
		}
	}
	want := files(t, p.FS)
	r := mustMerge(t, p, "f", forkspace.MergeOptions{})
	if len(r.Conflicts) != 0 {
		t.Fatalf("conflicts: %+v", r.Conflicts)
	}
	if got := files(t, p.FS); !equalMaps(got, want) {
		t.Fatalf("merged %v, want %v", got, want)
	}
}
