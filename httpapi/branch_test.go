package httpapi_test

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/httpapi"
)

// TestBranchAPI: fork-n, compare and promote, the same through Local and
// through a Client of a real server.
func TestBranchAPI(t *testing.T) {
	both(t, func(t *testing.T, e *env, api httpapi.API) {
		ctx := context.Background()
		write := writer(t, api)
		_, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "job"})
		must(t, err)
		write("job", "a.txt", "a\n")
		infos, err := api.ForkN(ctx, "job", httpapi.ForkNRequest{N: 3})
		must(t, err)
		var got []string
		for _, in := range infos {
			got = append(got, in.Name)
		}
		if !slices.Equal(got, []string{"job-1", "job-2", "job-3"}) {
			t.Fatalf("forks %v", got)
		}
		if _, err := api.ForkN(ctx, "job", httpapi.ForkNRequest{N: 2, Names: []string{"x", "job-1"}}); !errors.Is(err, fs.ErrExist) {
			t.Errorf("fork-n onto a taken name: %v", err)
		}
		if _, err := api.ForkN(ctx, "job", httpapi.ForkNRequest{N: 0}); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("fork-n of 0: %v", err)
		}
		write("job-1", "b.txt", "b\n")
		write("job-2", "a.txt", "two\n")
		write("job-2", "c.txt", "c\n")
		cmp, err := api.Compare(ctx, []string{"job", "job-1", "job-2"}, true)
		must(t, err)
		if cmp.Changes[0][1] != 1 || cmp.Changes[0][2] != 2 || cmp.Changes[1][2] != 3 || len(cmp.Pairs) != 3 {
			t.Errorf("compare: %+v", cmp)
		}
		if !strings.Contains(cmp.Pairs[1].Changes[0].Unified+cmp.Pairs[1].Changes[1].Unified, "+two") {
			t.Errorf("compare without unified diffs: %+v", cmp.Pairs[1])
		}
		if _, err := api.Compare(ctx, []string{"job", "missing"}, false); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("compare with a missing state: %v", err)
		}
		if _, err := api.Compare(ctx, []string{"job", "job"}, false); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("compare a state with itself: %v", err)
		}
		write("job", "a.txt", "parent\n")
		if _, err := api.Promote(ctx, "job-2", httpapi.PromoteRequest{Policy: forkspace.MergeFail}); !errors.Is(err, errdefs.ErrConflict) {
			t.Errorf("promote stopped by a conflict: %v", err)
		}
		res, err := api.Promote(ctx, "job-2", httpapi.PromoteRequest{Policy: forkspace.MergeTheirs})
		must(t, err)
		if res.Into != "job" || !slices.Equal(res.Deleted, []string{"job-1", "job-3"}) || res.Merge == nil {
			t.Errorf("promote: %+v", res)
		}
		page, err := api.ListWorkspaces(ctx, httpapi.PageRequest{})
		must(t, err)
		got = got[:0]
		for _, in := range page.Workspaces {
			got = append(got, in.Name)
		}
		if !slices.Equal(got, []string{"job", "job-2"}) {
			t.Errorf("workspaces after promote: %v", got)
		}
		if _, err := api.Promote(ctx, "job", httpapi.PromoteRequest{}); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("promote a workspace that is not a fork: %v", err)
		}
	})
}
