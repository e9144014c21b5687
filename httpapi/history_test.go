package httpapi_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"testing"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/httpapi"
)

// TestHistoryAPI lists a workspace's steps through Local and a Client, and
// reads a file as of one of them by its state ref.
func TestHistoryAPI(t *testing.T) {
	both(t, func(t *testing.T, e *env, api httpapi.API) {
		ctx := context.Background()
		write := writer(t, api)
		_, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
		must(t, err)
		write("w", "a.txt", "one\n")
		write("w", "a.txt", "two\n")
		steps, err := api.History(ctx, "w", forkspace.HistoryOptions{})
		must(t, err)
		if len(steps) < 2 || steps[0].Back != "w@~0" || steps[0].Changed[0] != "a.txt" || steps[1].State == "" {
			t.Fatalf("steps: %+v", steps)
		}
		for ref, want := range map[string]string{steps[1].State: "one\n", "w@~0": "two\n"} {
			d, err := api.Open(ctx, ref, "a.txt", httpapi.ReadRequest{})
			must(t, err)
			b, err := io.ReadAll(d)
			d.Close()
			if err != nil || string(b) != want {
				t.Errorf("%s a.txt = %q, %v; want %q", ref, b, err, want)
			}
		}
		page, err := api.History(ctx, "w", forkspace.HistoryOptions{Limit: 1, Before: steps[0].Seq})
		if err != nil || len(page) != 1 || page[0].Seq != steps[1].Seq {
			t.Errorf("page: %+v, %v", page, err)
		}
		if _, err := api.History(ctx, "missing", forkspace.HistoryOptions{}); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("history of a missing workspace: %v", err)
		}
		if _, err := api.Open(ctx, "w@~99", "a.txt", httpapi.ReadRequest{}); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("read past history: %v", err)
		}
		if _, err := api.Open(ctx, "w@~x", "a.txt", httpapi.ReadRequest{}); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("read at a malformed ref: %v", err)
		}
	})
}
