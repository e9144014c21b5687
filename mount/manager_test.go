package mount_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/mounttest"
	"github.com/forkspace/forkspace/vfs"
)

var ctx = context.Background()

func read(t *testing.T, f *vfs.FS, p string) string {
	t.Helper()
	b, err := f.ReadFile(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ok(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond until it holds (write-back timers fire in the
// background); it fails the test only after a generous deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

func TestLazyHydration(t *testing.T) {
	src := newSource(map[string]string{"a.txt": "alpha", "d/b.txt": "beta", "d/empty": ""})
	s := mounttest.NewStore(t)
	f := s.Create("ws")
	m := s.Attach(f, "ws", []mount.Spec{{Root: "/data", Mount: src}}, nil)
	fi, err := f.Stat(ctx, "data/d/b.txt") // first use indexes
	ok(t, err)
	if fi.Size() != 4 || src.lists.Load() != 1 || src.fetches.Load() != 0 {
		t.Fatalf("after index: size %d, %d lists, %d fetches", fi.Size(), src.lists.Load(), src.fetches.Load())
	}
	if got := read(t, f, "data/d/empty"); got != "" || src.fetches.Load() != 0 {
		t.Fatalf("empty file: %q, %d fetches", got, src.fetches.Load())
	}
	// Concurrent first reads of one stub share one fetch.
	src.fetchGate = make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got, err := f.ReadFile(ctx, "data/a.txt"); err != nil || string(got) != "alpha" {
				t.Errorf("read: %q %v", got, err)
			}
		})
	}
	eventually(t, "a fetch starts", func() bool { return src.fetches.Load() == 1 })
	close(src.fetchGate)
	wg.Wait()
	if n := src.fetches.Load(); n != 1 {
		t.Fatalf("8 concurrent reads made %d fetches", n)
	}
	// A handle reads a stub's bytes too; hydrated files cost no request.
	h, err := f.Open(ctx, "data/d/b.txt")
	ok(t, err)
	b, err := io.ReadAll(h)
	ok(t, err)
	ok(t, h.Close())
	if string(b) != "beta" {
		t.Fatalf("handle read %q", b)
	}
	before := src.fetches.Load()
	for range 10 {
		read(t, f, "data/a.txt")
		read(t, f, "data/d/b.txt")
	}
	if n := src.fetches.Load() - before; n != 0 {
		t.Fatalf("reads after hydration made %d fetches", n)
	}
	if fi, _ := f.Stat(ctx, "data/a.txt"); !fi.ModTime().Equal(time.Unix(1e9, 0)) {
		t.Fatalf("hydration changed mtime: %v", fi.ModTime())
	}
	ok(t, m.Close())
}

func TestReopenDoesNotRelist(t *testing.T) {
	src := newSource(map[string]string{"a": "1", "b": "22"})
	s := mounttest.NewStore(t)
	f := s.Create("ws")
	m := s.Attach(f, "ws", []mount.Spec{{Root: "/data", Mount: src}}, nil)
	ok(t, m.Index(ctx))
	read(t, f, "data/a")
	ok(t, m.Close())
	ok(t, f.Close())
	s.Reopen()
	f = s.Open("ws")
	m = s.Attach(f, "ws", []mount.Spec{{Root: "/data", Mount: src}}, nil)
	ok(t, m.Index(ctx))
	if got := read(t, f, "data/a") + read(t, f, "data/b"); got != "122" {
		t.Fatalf("after reopen: %q", got)
	}
	if src.lists.Load() != 1 || src.fetches.Load() != 2 {
		t.Fatalf("reopen: %d lists, %d fetches (want 1, 2)", src.lists.Load(), src.fetches.Load())
	}
}

func TestIndexFailures(t *testing.T) {
	files := map[string]string{"a": "12345", "b": "67890", "c/d": "x"}
	cases := []struct {
		name string
		opts mount.Options
		fail error
		want error
	}{
		{"entries", mount.Options{MaxEntries: 2}, nil, errdefs.ErrQuota},
		{"bytes", mount.Options{MaxBytes: 10}, nil, errdefs.ErrQuota},
		{"unreachable", mount.Options{}, errDown, mount.ErrUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := newSource(files)
			src.failList = c.fail
			s := mounttest.NewStore(t)
			f := s.Create("ws")
			m := s.Attach(f, "ws", []mount.Spec{{Root: "/data", Mount: src, Options: c.opts}, {Root: "/other", Mount: newSource(files)}}, nil)
			err := m.Index(ctx)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), "/data") {
				t.Fatalf("index: %v, want %v naming /data", err, c.want)
			}
			// Operations under the root report the cause, and nothing came in.
			if _, err := f.Stat(ctx, "data/a"); !errors.Is(err, c.want) {
				t.Fatalf("stat under the failed mount: %v, want the index's cause %v", err, c.want)
			}
			if ents, err := f.ReadDir(ctx, "."); err != nil || slices.ContainsFunc(ents, func(e fs.DirEntry) bool { return e.Name() == "data" }) {
				t.Fatalf("a failed index left data behind: %v %v", ents, err)
			}
			if read(t, f, "other/c/d") != "x" {
				t.Fatal("the other mount was not indexed")
			}
			// The next process does not list a mount that just failed
			// again: it reports the recorded cause; Refresh retries.
			lists := src.lists.Load()
			m2 := s.Attach(f, "ws", []mount.Spec{{Root: "/data", Mount: src, Options: c.opts}, {Root: "/other", Mount: newSource(files)}}, nil)
			if _, err := f.Stat(ctx, "data/a"); !errors.Is(err, c.want) || src.lists.Load() != lists {
				t.Fatalf("first use after a failure: %v after %d more lists, want the recorded cause and none", err, src.lists.Load()-lists)
			}
			m = m2
			// The failed mount indexes once the source recovers.
			src.mu.Lock()
			src.failList = nil
			src.mu.Unlock()
			if c.fail != nil {
				ok(t, m.Refresh(ctx, "/data"))
				if read(t, f, "data/a") != "12345" {
					t.Fatal("recovered index")
				}
			}
		})
	}
}

func TestReadOnly(t *testing.T) {
	src := newSource(map[string]string{"a": "1", "d/b": "2"})
	s := mounttest.NewStore(t)
	f := s.Create("ws")
	s.Attach(f, "ws", []mount.Spec{{Root: "/data", Mount: src}}, nil)
	ok(t, f.WriteFile(ctx, "outside", []byte("x"), 0o644))
	ops := map[string]func() error{
		"write":     func() error { return f.WriteFile(ctx, "data/a", []byte("x"), 0o644) },
		"create":    func() error { return f.WriteFile(ctx, "data/new", []byte("x"), 0o644) },
		"mkdir":     func() error { return f.Mkdir(ctx, "data/dir", 0o755) },
		"remove":    func() error { return f.Remove(ctx, "data/a") },
		"removeall": func() error { return f.RemoveAll(ctx, "data/d") },
		"rename-in": func() error { return f.Rename(ctx, "outside", "data/x") },
		"rename-out": func() error {
			return f.Rename(ctx, "data/a", "stolen")
		},
		"truncate": func() error { return f.Truncate(ctx, "data/a", 0) },
		"chmod":    func() error { return f.Chmod(ctx, "data/a", 0o600) },
		"symlink":  func() error { return f.Symlink(ctx, "a", "data/l") },
		"link":     func() error { return f.Link(ctx, "outside", "data/h") },
		"open-write": func() error {
			_, err := f.OpenFile(ctx, "data/a", vfs.O_WRONLY, 0)
			return err
		},
	}
	for name, op := range ops {
		if err := op(); !isReadOnly(err) {
			t.Errorf("%s: %v, want errdefs.ErrReadOnly in a *fs.PathError", name, err)
		}
	}
	if err := f.RemoveAll(ctx, "data"); !errors.Is(err, errdefs.ErrReadOnly) {
		t.Errorf("remove the mount root: %v, want errdefs.ErrReadOnly", err)
	}
	if err := f.Chmod(ctx, "data", 0o700); !isReadOnly(err) {
		t.Errorf("chmod of a read-only mount root: %v, want errdefs.ErrReadOnly", err)
	}
	if err := f.MkdirAll(ctx, "data", 0o755); err != nil {
		t.Errorf("mkdir -p of a read-only mount root (it exists): %v", err)
	}
	if read(t, f, "data/a") != "1" || src.puts.Load()+src.deletes.Load() != 0 {
		t.Fatal("a refused write changed something")
	}
}

// TestReadWriteRoot: the root of a read-write mount is a directory like
// any other but for its place — it cannot be removed, renamed or replaced
// — so mkdir -p of it, and changes of its attributes, work (and write
// nothing back to the source).
func TestReadWriteRoot(t *testing.T) {
	src := newSource(map[string]string{"a": "1"})
	s := mounttest.NewStore(t)
	f := s.Create("ws")
	s.Attach(f, "ws", []mount.Spec{rwSpec(src, mount.Debounce, 10)}, nil)
	ok(t, f.MkdirAll(ctx, "data", 0o755))
	ok(t, f.MkdirAll(ctx, "data/new/sub", 0o755))
	ok(t, f.Chmod(ctx, "data", 0o750))
	when := time.Date(2020, 1, 2, 3, 4, 5, 6, time.UTC)
	ok(t, f.Chtimes(ctx, "data", when, when))
	ok(t, f.Lchown(ctx, "data", 0, 0))
	ok(t, f.Lchtimes(ctx, "data", when, when))
	ok(t, f.Setxattr(ctx, "data", "user.k", []byte("v")))
	fi, err := f.Stat(ctx, "data")
	ok(t, err)
	if fi.Mode().Perm() != 0o750 || !fi.ModTime().Equal(when) {
		t.Fatalf("the root after chmod and chtimes: %v %v", fi.Mode(), fi.ModTime())
	}
	for name, op := range map[string]func() error{
		"remove":    func() error { return f.Remove(ctx, "data") },
		"removeall": func() error { return f.RemoveAll(ctx, "data") },
		"rename":    func() error { return f.Rename(ctx, "data", "moved") },
		"mkdir":     func() error { return f.Mkdir(ctx, "data", 0o755) },
	} {
		if err := op(); err == nil {
			t.Errorf("%s of the mount root succeeded", name)
		}
	}
	if read(t, f, "data/a") != "1" || src.deletes.Load() != 0 {
		t.Fatal("the root's attributes changed the source")
	}
}

func rwSpec(src mount.Mount, wb mount.WriteBack, ms int) mount.Spec {
	return mount.Spec{Root: "/data", Mount: src, Options: mount.Options{Mode: mount.ReadWrite, WriteBack: wb, WriteBackMs: ms}}
}

func TestWriteBackCollapses(t *testing.T) {
	src := newSource(map[string]string{"manifest.json": "{}"})
	s := mounttest.NewStore(t)
	f := s.Create("ws")
	// The window is wide enough for 20 writes on a loaded machine under
	// the race detector.
	m := s.Attach(f, "ws", []mount.Spec{rwSpec(src, mount.Debounce, 500)}, nil)
	for i := range 20 {
		ok(t, f.WriteFile(ctx, "data/manifest.json", []byte(strings.Repeat("x", i+1)), 0o644))
	}
	eventually(t, "the burst is written back", func() bool { return len(m.Pending("/data")) == 0 })
	if got, _ := src.get("manifest.json"); got != strings.Repeat("x", 20) || src.puts.Load() != 1 {
		t.Fatalf("upstream %q after %d puts (want the final state in one put)", got, src.puts.Load())
	}
	// The precondition was the indexed version: a second burst puts once
	// more against the version the first put returned.
	ok(t, f.WriteFile(ctx, "data/manifest.json", []byte("final"), 0o644))
	ok(t, m.Flush(ctx, ""))
	if got, _ := src.get("manifest.json"); got != "final" || src.puts.Load() != 2 {
		t.Fatalf("second burst: %q after %d puts", got, src.puts.Load())
	}
}

func TestManualWriteBack(t *testing.T) {
	src := newSource(map[string]string{"a": "1", "gone": "x", "dir/f1": "1", "dir/f2": "2"})
	s := mounttest.NewStore(t)
	f := s.Create("ws")
	m := s.Attach(f, "ws", []mount.Spec{rwSpec(src, mount.Manual, 0)}, nil)
	ok(t, f.WriteFile(ctx, "data/a", []byte("first"), 0o644))
	ok(t, f.WriteFile(ctx, "data/new", []byte("stale"), 0o644))
	ok(t, f.Rename(ctx, "data/new", "data/renamed"))
	ok(t, f.Remove(ctx, "data/gone"))
	ok(t, f.RemoveAll(ctx, "data/dir"))
	ok(t, f.Mkdir(ctx, "data/emptydir", 0o755))
	ok(t, f.WriteFile(ctx, "data/a", []byte("second"), 0o644))
	if src.puts.Load()+src.deletes.Load() != 0 {
		t.Fatal("manual write-back wrote before Flush")
	}
	ok(t, m.Flush(ctx, "/data"))
	want := "a,renamed"
	if got := strings.Join(src.paths(), ","); got != want {
		t.Fatalf("upstream holds %s, want %s", got, want)
	}
	if got, _ := src.get("a"); got != "second" || src.puts.Load() != 2 {
		t.Fatalf("a = %q after %d puts (want second after 2: a and renamed)", got, src.puts.Load())
	}
	if _, ok := src.get("new"); ok {
		t.Fatal("a path renamed away inside the window was uploaded")
	}
	if len(m.Pending("/data")) != 0 {
		t.Fatalf("pending after flush: %v", m.Pending("/data"))
	}
}

func TestRestartMidDebounce(t *testing.T) {
	src := newSource(map[string]string{"a": "1"})
	s := mounttest.NewStore(t)
	f := s.Create("ws")
	spec := rwSpec(src, mount.Debounce, int(time.Hour/time.Millisecond))
	m := s.Attach(f, "ws", []mount.Spec{spec}, nil)
	ok(t, f.WriteFile(ctx, "data/a", []byte("unsaved"), 0o644))
	ok(t, m.Close()) // the process dies before the window ends
	ok(t, f.Close())
	s.Reopen()
	f = s.Open("ws")
	spec.Options.WriteBackMs = 10
	m = s.Attach(f, "ws", []mount.Spec{spec}, nil)
	eventually(t, "the resumed write-back lands", func() bool { got, _ := src.get("a"); return got == "unsaved" })
	eventually(t, "nothing pending", func() bool { return len(m.Pending("/data")) == 0 })
	if src.puts.Load() != 1 {
		t.Fatalf("%d puts", src.puts.Load())
	}
}

func TestConflicts(t *testing.T) {
	t.Run("upstream-changed-on-flush", func(t *testing.T) {
		src := newSource(map[string]string{"a": "1"})
		var c conflicts
		s := mounttest.NewStore(t)
		f := s.Create("ws")
		m := s.Attach(f, "ws", []mount.Spec{rwSpec(src, mount.Manual, 0)}, c.hook)
		ok(t, f.WriteFile(ctx, "data/a", []byte("local"), 0o644))
		src.set("a", "upstream")
		if err := m.Flush(ctx, ""); !errors.Is(err, errdefs.ErrConflict) {
			t.Fatalf("flush: %v, want errdefs.ErrConflict", err)
		}
		if got, _ := src.get("a"); got != "upstream" || c.reasons() != "upstream-changed:a" {
			t.Fatalf("upstream %q, conflicts %s", got, c.reasons())
		}
		if read(t, f, "data/a") != "local" || !slices.Equal(m.Conflicts("/data"), []string{"a"}) {
			t.Fatalf("the local state was lost or the conflict is not kept: conflicts %v", m.Conflicts("/data"))
		}
		// A refresh keeps the local edit of a conflicted path.
		ok(t, f.WriteFile(ctx, "data/a", []byte("local again"), 0o644))
		ok(t, m.Refresh(ctx, "/data"))
		if read(t, f, "data/a") != "local again" {
			t.Fatal("refresh after a conflict discarded the local edit")
		}
		// Resolve: keep-local force-pushes; take-upstream takes the source.
		ok(t, m.Resolve(ctx, "/data", "a", mount.KeepLocal))
		if got, _ := src.get("a"); got != "local again" || len(m.Pending("/data")) != 0 {
			t.Fatalf("after keep-local: upstream %q, pending %v", got, m.Pending("/data"))
		}
		ok(t, f.WriteFile(ctx, "data/a", []byte("mine"), 0o644))
		src.set("a", "theirs")
		if err := m.Flush(ctx, ""); !errors.Is(err, errdefs.ErrConflict) {
			t.Fatalf("flush: %v, want errdefs.ErrConflict", err)
		}
		ok(t, m.Resolve(ctx, "/data", "a", mount.TakeUpstream))
		if got := read(t, f, "data/a"); got != "theirs" || len(m.Pending("/data")) != 0 {
			t.Fatalf("after take-upstream: %q, pending %v", got, m.Pending("/data"))
		}
	})
	t.Run("upstream-changed-on-refresh", func(t *testing.T) {
		src := newSource(map[string]string{"a": "1", "b": "2"})
		var c conflicts
		s := mounttest.NewStore(t)
		f := s.Create("ws")
		m := s.Attach(f, "ws", []mount.Spec{rwSpec(src, mount.Manual, 0)}, c.hook)
		ok(t, f.WriteFile(ctx, "data/a", []byte("local"), 0o644))
		src.set("a", "upstream")
		src.set("b", "upstream b")
		ok(t, m.Refresh(ctx, "/data"))
		if read(t, f, "data/a") != "local" || read(t, f, "data/b") != "upstream b" || c.reasons() != "upstream-changed:a" {
			t.Fatalf("refresh: a %q b %q conflicts %s", read(t, f, "data/a"), read(t, f, "data/b"), c.reasons())
		}
	})
	t.Run("put-failed", func(t *testing.T) {
		src := newSource(map[string]string{"a": "1"})
		src.failPut = errDown
		var c conflicts
		s := mounttest.NewStore(t)
		f := s.Create("ws")
		m := s.Attach(f, "ws", []mount.Spec{rwSpec(src, mount.Manual, 0)}, c.hook)
		ok(t, f.WriteFile(ctx, "data/a", []byte("local"), 0o644))
		if err := m.Flush(ctx, ""); !errors.Is(err, mount.ErrUnavailable) {
			t.Fatalf("flush: %v", err)
		}
		if read(t, f, "data/a") != "local" || len(m.Pending("/data")) != 1 || c.reasons() != "put-failed:a" {
			t.Fatalf("after a failed put: pending %v, conflicts %s", m.Pending("/data"), c.reasons())
		}
		src.mu.Lock()
		src.failPut = nil
		src.mu.Unlock()
		ok(t, m.Flush(ctx, ""))
		if got, _ := src.get("a"); got != "local" {
			t.Fatalf("retried flush: %q", got)
		}
	})
}

func TestRefresh(t *testing.T) {
	src := newSource(map[string]string{"same": "s", "changed": "old", "gone": "g"})
	s := mounttest.NewStore(t)
	f := s.Create("ws")
	m := s.Attach(f, "ws", []mount.Spec{{Root: "/data", Mount: src}}, nil)
	read(t, f, "data/same")
	read(t, f, "data/changed")
	src.set("changed", "new!")
	src.set("added", "a")
	src.remove("gone")
	ok(t, m.Refresh(ctx, "/data"))
	fetches := src.fetches.Load()
	if read(t, f, "data/same") != "s" || src.fetches.Load() != fetches {
		t.Fatal("an unchanged hydrated file was fetched again")
	}
	if read(t, f, "data/changed") != "new!" || read(t, f, "data/added") != "a" {
		t.Fatal("refresh missed a change")
	}
	if _, err := f.Stat(ctx, "data/gone"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("gone upstream: %v", err)
	}
}

// TestRefreshNeverIndexed: a refresh that starts with the first index
// lists the source once, not twice.
func TestRefreshNeverIndexed(t *testing.T) {
	src := newSource(map[string]string{"a": "1"})
	s := mounttest.NewStore(t)
	f := s.Create("ws")
	m := s.Attach(f, "ws", []mount.Spec{{Root: "/data", Mount: src}}, nil)
	ok(t, m.Refresh(ctx, "/data"))
	if n := src.lists.Load(); n != 1 {
		t.Fatalf("refresh of a never-indexed mount listed %d times", n)
	}
	ok(t, m.Refresh(ctx, "/data"))
	if n := src.lists.Load(); n != 2 {
		t.Fatalf("a second refresh: %d lists, want 2", n)
	}
}
