package mount_test

import (
	"context"
	"errors"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/mounttest"
)

// TestFactoryReadsWorkspace: a factory reads workspace state through
// Context.FS (outside mount roots) during the index that calls it, and
// a read under a mount root being indexed fails with ErrBusy instead of
// waiting for itself. Every factory call returns.
func TestFactoryReadsWorkspace(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first func(t *testing.T, m *mount.Manager, read func(string) ([]byte, error))
	}{
		{"lazy", func(t *testing.T, _ *mount.Manager, read func(string) ([]byte, error)) {
			b, err := read("data/x")
			if err != nil || string(b) != "from prefix/x" {
				t.Fatalf("read data/x: %q %v", b, err)
			}
		}},
		{"IndexMounts", func(t *testing.T, m *mount.Manager, _ func(string) ([]byte, error)) {
			ok(t, m.Index(ctx))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mounttest.NewStore(t)
			f := s.Create("ws")
			ok(t, f.MkdirAll(ctx, "config", 0o755))
			ok(t, f.WriteFile(ctx, "config/prefix.txt", []byte("prefix"), 0o644))
			calls := 0
			var inMount, inOther error
			factory := func(ctx context.Context, mc mount.Context) (mount.Mount, error) {
				calls++
				prefix, err := mc.FS.ReadFile(ctx, "config/prefix.txt")
				if err != nil {
					return nil, err
				}
				_, inMount = mc.FS.ReadFile(ctx, "data/x")
				_, inOther = mc.FS.Stat(ctx, "other")
				if _, err := mc.FS.ReadDir(ctx, "."); err != nil {
					return nil, err
				}
				return newSource(map[string]string{"x": "from " + string(prefix) + "/x"}), nil
			}
			m := s.Attach(f, "ws", []mount.Spec{
				{Root: "/data", Factory: factory},
				{Root: "/other", Mount: newSource(map[string]string{"y": "y"})},
			}, nil)
			defer m.Close()
			mounttest.Within(t, "the first operation", func() { tc.first(t, m, func(p string) ([]byte, error) { return f.ReadFile(ctx, p) }) })
			if calls != 1 {
				t.Fatalf("factory called %d times", calls)
			}
			for what, err := range map[string]error{"its own root": inMount, "another root": inOther} {
				if !errors.Is(err, errdefs.ErrBusy) {
					t.Errorf("factory read under %s: %v, want ErrBusy", what, err)
				}
			}
			mounttest.Within(t, "a read after the index", func() {
				if got := read(t, f, "data/x"); got != "from prefix/x" {
					t.Errorf("data/x = %q", got)
				}
			})
		})
	}
}
