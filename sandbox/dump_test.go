package sandbox

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/fusefs"
)

// dumpHost describes every entry under dir except ignored ones: type,
// permission bits, content hash and mtime or link target.
func dumpHost(t tb, dir string, ignore *matcher) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, abs)
		if rel == "." {
			return nil
		}
		if ignore.self(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[rel] = describe(fi, func() ([]byte, error) { return os.ReadFile(abs) }, func() (string, error) { return os.Readlink(abs) })
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// dumpWS describes every entry of the workspace except ignored ones.
func dumpWS(t tb, ws *forkspace.Workspace, ignore *matcher) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := ws.ReadDir(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			p := path.Join(dir, e.Name())
			if ignore.self(p) {
				continue
			}
			fi, err := ws.Lstat(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = describe(fi, func() ([]byte, error) { return ws.ReadFile(ctx, p) }, func() (string, error) { return ws.Readlink(ctx, p) })
			if fi.IsDir() {
				walk(p)
			}
		}
	}
	walk(".")
	return out
}

func describe(fi fs.FileInfo, read func() ([]byte, error), link func() (string, error)) string {
	perm := hostPerm(fi.Mode())
	switch kindOf(fi.Mode()) {
	case kindFile:
		b, err := read()
		if err != nil {
			return "unreadable: " + err.Error()
		}
		return fmt.Sprintf("file %v %s mtime=%d", perm, cas.Sum(b).String()[:12], fi.ModTime().UnixNano())
	case kindDir:
		return fmt.Sprintf("dir %v", perm)
	case kindSymlink:
		target, err := link()
		if err != nil {
			return "unreadable link: " + err.Error()
		}
		return "symlink -> " + target
	}
	return "special " + fi.Mode().String()
}

// sameTree fails the test unless the work dir and the workspace hold the
// same tree.
func sameTree(t tb, s *Shell, ws *forkspace.Workspace) {
	t.Helper()
	if s.opts.Mode == ModeFUSE {
		noScratch(t, s, ws)
		return
	}
	ignore := newMatcher(s.opts.Ignore)
	host, got := dumpHost(t, s.WorkDir(), ignore), dumpWS(t, ws, ignore)
	for p, h := range host {
		if got[p] != h {
			t.Errorf("%s: work dir has %q, workspace %q", p, h, got[p])
		}
	}
	for p, w := range got {
		if _, ok := host[p]; !ok {
			t.Errorf("%s: workspace has %q, work dir nothing", p, w)
		}
	}
}

// tb is what the tree helpers need of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Errorf(format string, args ...any)
	Fatal(args ...any)
}

// noScratch checks what a run on a FUSE mount leaves behind: no scratch
// fork of the workspace, nothing mounted at the mount point, and the work
// dir untouched (empty).
func noScratch(t tb, s *Shell, ws *forkspace.Workspace) {
	t.Helper()
	if ids, err := ws.ScratchForks(context.Background()); err != nil || len(ids) != 0 {
		t.Errorf("scratch forks left: %v, %v", ids, err)
	}
	if mounted, err := fusefs.Mounted(s.mountDir()); err != nil || mounted {
		t.Errorf("%s still mounted: %v", s.mountDir(), err)
	}
	if ents, _ := os.ReadDir(s.WorkDir()); len(ents) != 0 {
		t.Errorf("the work dir of a run on the mount holds %d entries", len(ents))
	}
}
