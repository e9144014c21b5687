package s3mount_test

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/internal/s3test"
	"github.com/forkspace/forkspace/mount"
)

// object is the model of one upstream object.
type object struct {
	data    string
	version string
}

// modelList is what List must return for the model: every object whose
// path is not also a directory of another, in path order.
func modelList(model map[string]object) []string {
	var out []string
	for p := range model {
		shadowed := false
		for q := range model {
			if strings.HasPrefix(q, p+"/") {
				shadowed = true
			}
		}
		if !shadowed {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// TestModel runs random puts (unconditional, with the current version,
// with a stale one), deletes, fetches and lists against the real server
// and checks each result against a map.
func TestModel(t *testing.T) {
	srv := s3test.Start(t, bucket)
	srv.Seed(t, bucket, "outside", []byte("never listed"))
	paths := []string{"a", "a/b", "a/b/c", "d/e", "f"}
	run := 0
	rapid.Check(t, func(rt *rapid.T) {
		run++
		prefix := fmt.Sprintf("run%d", run)
		srv.Seed(t, bucket, prefix+"x/sibling", []byte("outside the prefix"))
		m := open(t, options(srv, prefix))
		model := map[string]object{}
		stale := map[string]string{} // an older version of each path
		ctx := t.Context()
		rt.Repeat(map[string]func(*rapid.T){
			"put": func(rt *rapid.T) {
				p := rapid.SampledFrom(paths).Draw(rt, "path")
				data := rapid.StringMatching(`[a-z]{0,8}`).Draw(rt, "data")
				cond := rapid.SampledFrom([]string{"none", "current", "stale"}).Draw(rt, "cond")
				cur, exists := model[p]
				ifVersion := mount.Unconditional
				switch cond {
				case "current":
					ifVersion = cur.version
				case "stale":
					old, ok := stale[p]
					if !ok || old == cur.version {
						rt.Skip("no stale version of this path")
					}
					ifVersion = old
				}
				v, err := m.Put(ctx, p, []byte(data), ifVersion)
				if cond == "stale" {
					if !errors.Is(err, errdefs.ErrConflict) {
						rt.Fatalf("put %s over a stale version = %v, want errdefs.ErrConflict", p, err)
					}
					return
				}
				if err != nil {
					rt.Fatalf("put %s (%s, exists %v) = %v", p, cond, exists, err)
				}
				if exists {
					stale[p] = cur.version
				}
				model[p] = object{data: data, version: v}
			},
			"delete": func(rt *rapid.T) {
				p := rapid.SampledFrom(paths).Draw(rt, "path")
				if err := m.Delete(ctx, p, ""); err != nil {
					rt.Fatalf("delete %s = %v", p, err)
				}
				if cur, ok := model[p]; ok {
					stale[p] = cur.version
				}
				delete(model, p)
			},
			"fetch": func(rt *rapid.T) {
				p := rapid.SampledFrom(paths).Draw(rt, "path")
				b, err := m.Fetch(ctx, p)
				want, ok := model[p]
				switch {
				case !ok && !errors.Is(err, fs.ErrNotExist):
					rt.Fatalf("fetch of missing %s = %q, %v", p, b, err)
				case ok && (err != nil || string(b) != want.data):
					rt.Fatalf("fetch %s = %q, %v; want %q", p, b, err, want.data)
				}
			},
			"": func(rt *rapid.T) {
				ents, err := m.List(ctx)
				if err != nil {
					rt.Fatalf("list: %v", err)
				}
				var got []string
				for _, e := range ents {
					got = append(got, e.Path)
					if want := model[e.Path]; e.Version != want.version || e.Size != int64(len(want.data)) {
						rt.Fatalf("listed %+v, model has %+v", e, want)
					}
				}
				if want := modelList(model); !slices.Equal(got, want) {
					rt.Fatalf("list = %v, want %v (model %v)", got, want, slices.Sorted(maps.Keys(model)))
				}
			},
		})
	})
}
