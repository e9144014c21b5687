package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/httpapi"
)

// TestMergeAPI: merge (recorded, and stopped by the fail policy),
// conflicts, resolve, cherry-pick and restore of paths, the same through
// Local and through a Client of a real server.
func TestMergeAPI(t *testing.T) {
	both(t, func(t *testing.T, e *env, api httpapi.API) {
		ctx := context.Background()
		write := writer(t, api)
		read := func(ws, p string) string {
			t.Helper()
			d, err := api.Open(ctx, ws, p, httpapi.ReadRequest{Length: -1})
			must(t, err)
			defer d.Close()
			b, err := io.ReadAll(d)
			must(t, err)
			return string(b)
		}
		_, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "main"})
		must(t, err)
		write("main", "f.txt", "a\nb\nc\nd\ne\n")
		write("main", "g.txt", "x\n")
		_, err = api.Checkpoint(ctx, "main", "start")
		must(t, err)
		_, err = api.ForkWorkspace(ctx, "main", httpapi.ForkRequest{Name: "feat"})
		must(t, err)
		write("main", "f.txt", "A\nb\nc\nd\ne\n")
		write("feat", "f.txt", "a\nb\nc\nd\nE\n")
		write("main", "g.txt", "main\n")
		write("feat", "g.txt", "feat\n")

		// The fail policy stops on the clash of g.txt and changes nothing.
		res, err := api.Merge(ctx, "main", httpapi.MergeRequest{From: "feat", Policy: forkspace.MergeFail})
		if !errors.Is(err, errdefs.ErrConflict) || len(res.Conflicts) != 1 || res.Conflicts[0].Path != "g.txt" {
			t.Fatalf("merge --fail: %+v %v", res, err)
		}
		if got := read("main", "f.txt"); got != "A\nb\nc\nd\ne\n" {
			t.Fatalf("after a stopped merge f.txt is %q", got)
		}
		// Recorded: f.txt merges line by line, g.txt waits.
		res, err = api.Merge(ctx, "main", httpapi.MergeRequest{From: "feat"})
		must(t, err)
		if len(res.Conflicts) != 1 || res.Checkpoint == "" {
			t.Fatalf("merge: %+v", res)
		}
		if got := read("main", "f.txt"); got != "A\nb\nc\nd\nE\n" {
			t.Errorf("merged f.txt: %q", got)
		}
		cs, err := api.Conflicts(ctx, "main")
		must(t, err)
		if len(cs) != 1 || cs[0].Path != "g.txt" {
			t.Fatalf("conflicts: %+v", cs)
		}
		left, err := api.Resolve(ctx, "main", httpapi.ConflictResolution{Path: "g.txt", Take: forkspace.TakeContent, Content: []byte("both\n")})
		must(t, err)
		if left != 0 || read("main", "g.txt") != "both\n" {
			t.Errorf("resolve: %d left, g.txt %q", left, read("main", "g.txt"))
		}
		if _, err := api.Resolve(ctx, "main", httpapi.ConflictResolution{Path: "g.txt", Take: forkspace.TakeOurs}); err == nil {
			t.Error("resolving a conflict that is not there succeeded")
		}

		// Cherry-pick a path whole, then restore it from the checkpoint.
		write("feat", "new.txt", "from feat\n")
		_, err = api.CherryPick(ctx, "main", httpapi.CherryPickRequest{From: "feat", Paths: []string{"new.txt"}})
		must(t, err)
		if got := read("main", "new.txt"); got != "from feat\n" {
			t.Errorf("cherry-picked new.txt: %q", got)
		}
		_, err = api.RestorePaths(ctx, "main", httpapi.RestorePathsRequest{Checkpoint: "start", Paths: []string{"f.txt", "new.txt"}})
		must(t, err)
		if got := read("main", "f.txt"); !bytes.Equal([]byte(got), []byte("a\nb\nc\nd\ne\n")) {
			t.Errorf("restored f.txt: %q", got)
		}
		if _, err := api.Stat(ctx, "main", "new.txt"); err == nil {
			t.Error("new.txt survived a restore of a path the checkpoint lacks")
		}
	})
}
