package vfs_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/vfs"
)

// TestWatch: every durable mutation reaches the watchers once, with its
// context (a batch when it lands, a reset as the whole tree); a refused
// mutation and a stopped watcher hear nothing.
func TestWatch(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "caller")
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	var (
		mu  sync.Mutex
		got []vfs.Event
	)
	stop := f.Watch(func(c context.Context, ev vfs.Event) {
		if c.Value(key{}) != "caller" {
			t.Errorf("event %+v without the caller's context", ev)
		}
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
	})
	take := func() []vfs.Event {
		mu.Lock()
		defer mu.Unlock()
		out := got
		got = nil
		return out
	}
	must(t, f.WriteFile(ctx, "a", []byte("x"), 0o644))
	must(t, f.Mkdir(ctx, "d", 0o755))
	must(t, f.Rename(ctx, "a", "d/b"))
	h, err := f.OpenFile(ctx, "d/b", vfs.O_RDWR, 0)
	must(t, err)
	_, err = h.Write([]byte("y"))
	must(t, err)
	must(t, h.Close())
	root, err := f.Root(ctx)
	must(t, err)
	want := []vfs.Event{
		{Op: "write", Name: "a"}, {Op: "mkdir", Name: "d"},
		{Op: "rename", Name: "a"}, {Op: "rename", Name: "d/b"},
		{Op: "sync", Name: "d/b"},
	}
	if g := take(); !slices.Equal(g, want) {
		t.Fatalf("events %+v, want %+v", g, want)
	}

	if err := f.Mkdir(ctx, "d", 0o755); err == nil {
		t.Fatal("mkdir of an existing directory succeeded")
	}
	must(t, f.Batch(ctx, func(b *vfs.FS) error {
		must(t, b.WriteFile(ctx, "c", nil, 0o644))
		must(t, b.WriteFile(ctx, "d/ç 2", nil, 0o644))
		if g := take(); len(g) != 0 {
			t.Errorf("events %+v before the batch landed", g)
		}
		return nil
	}))
	must(t, f.Reset(ctx, root, nil))
	want = []vfs.Event{{Op: "batch", Name: "c"}, {Op: "batch", Name: "d/ç 2"}, {Op: "reset", Name: ".", Tree: true}}
	if g := take(); !slices.Equal(g, want) {
		t.Fatalf("events %+v, want %+v", g, want)
	}
	stop()
	must(t, f.WriteFile(ctx, "e", nil, 0o644))
	if g := take(); len(g) != 0 {
		t.Fatalf("events %+v after stop", g)
	}
}
