package mount_test

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/mounttest"
)

// TestWriteBackModel: after any sequence of writes, removals, renames and
// directory removals under a read-write mount (manual write-back) and a
// Flush, the source holds exactly the workspace's files under the mount
// and nothing stays pending.
func TestWriteBackModel(t *testing.T) {
	s := mounttest.NewStore(t)
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		id := fmt.Sprintf("ws%d", n)
		src := newSource(map[string]string{"a": "1", "d/b": "2", "d/e/c": "3"})
		f := s.Create(id)
		m := s.Attach(f, id, []mount.Spec{rwSpec(src, mount.Manual, 0)}, nil)
		names := rapid.SampledFrom([]string{"a", "b", "d/b", "d/x", "d/e/c", "e/y"})
		for range rapid.IntRange(1, 25).Draw(rt, "steps") {
			p := names.Draw(rt, "path")
			switch rapid.SampledFrom([]string{"write", "remove", "rename", "removeall", "flush"}).Draw(rt, "op") {
			case "write":
				data := rapid.StringMatching(`[a-z]{0,6}`).Draw(rt, "data")
				if err := f.MkdirAll(ctx, path.Dir("data/"+p), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
					continue // a file is in the way
				}
				_ = f.WriteFile(ctx, "data/"+p, []byte(data), 0o644)
			case "remove":
				_ = f.Remove(ctx, "data/"+p)
			case "rename":
				to := names.Draw(rt, "to")
				_ = f.Rename(ctx, "data/"+p, "data/"+to)
			case "removeall":
				_ = f.RemoveAll(ctx, "data/"+path.Dir(p))
			case "flush":
				if err := m.Flush(ctx, ""); err != nil {
					rt.Fatal(err)
				}
			}
		}
		if err := m.Flush(ctx, ""); err != nil {
			rt.Fatal(err)
		}
		want := map[string]string{}
		err := fs.WalkDir(f.IOFS(ctx), "data", func(p string, de fs.DirEntry, err error) error {
			if err != nil || de.IsDir() {
				return err
			}
			b, err := f.ReadFile(ctx, p)
			want[p[len("data/"):]] = string(b)
			return err
		})
		if err != nil {
			rt.Fatal(err)
		}
		got := map[string]string{}
		for _, p := range src.paths() {
			got[p], _ = src.get(p)
		}
		if !maps.Equal(got, want) {
			rt.Fatalf("source %v, workspace %v (keys %v)", got, want, slices.Sorted(maps.Keys(want)))
		}
		if len(m.Pending("/data")) != 0 {
			rt.Fatalf("pending after flush: %v", m.Pending("/data"))
		}
	})
}
