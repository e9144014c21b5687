package httpapi_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/httpapi"
)

// TestNotFoundHints: a missing path's error names the existing path the
// caller most likely meant, or the directory that is missing, through
// the API and the client alike, and stays a not-found error.
func TestNotFoundHints(t *testing.T) {
	both(t, func(t *testing.T, e *env, api httpapi.API) {
		ctx := t.Context()
		_, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
		must(t, err)
		_, err = api.Write(ctx, "w", "calc.py", strings.NewReader("print(1)"), httpapi.WriteRequest{})
		must(t, err)
		must(t, api.Mkdir(ctx, "w", "src", false))
		for _, c := range []struct {
			what string
			call func() error
			want string
		}{
			{"stat", func() error { _, err := api.Stat(ctx, "w", "calc"); return err }, "did you mean calc.py?"},
			{"open", func() error { _, err := api.Open(ctx, "w", "clac.py", httpapi.ReadRequest{}); return err }, "did you mean calc.py?"},
			{"list", func() error { _, err := api.ReadDir(ctx, "w", "sr", httpapi.PageRequest{}); return err }, "did you mean src?"},
			{"remove", func() error { return api.Remove(ctx, "w", "calc", false) }, "did you mean calc.py?"},
			{"rename into a mistyped directory", func() error { return api.Rename(ctx, "w", "calc.py", "sr/calc.py") }, "rename sr: file does not exist; did you mean src?"},
			{"rename into a missing directory", func() error { return api.Rename(ctx, "w", "calc.py", "nothing/like/it.py") }, "rename nothing/like: file does not exist (directory nothing does not exist)"},
			{"write under a missing directory", func() error {
				_, err := api.Write(ctx, "w", "nothing/x", strings.NewReader("x"), httpapi.WriteRequest{})
				return err
			}, "(directory nothing does not exist)"},
		} {
			err := c.call()
			if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want not found with %q", c.what, err, c.want)
			}
		}
		if got, err := api.Stat(ctx, "w", "calc.py"); err != nil || got.Size != 8 {
			t.Errorf("calc.py after the refused calls: %+v, %v", got, err)
		}
	})
}

// TestDanglingLinkHint: a dangling symbolic link is named as one, with
// its target, not as missing with a neighbour's name as the suggestion
// ("open lnk: file does not exist; did you mean lnk2?").
func TestDanglingLinkHint(t *testing.T) {
	both(t, func(t *testing.T, e *env, api httpapi.API) {
		ctx := t.Context()
		_, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
		must(t, err)
		w, err := e.st.Workspace(ctx, "w")
		must(t, err)
		must(t, w.Symlink(ctx, "gone/target.txt", "lnk"))
		must(t, w.Symlink(ctx, "nowhere", "lnk2"))
		_, err = api.Open(ctx, "w", "lnk", httpapi.ReadRequest{})
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "lnk is a dangling symbolic link: its target gone/target.txt does not exist") || strings.Contains(err.Error(), "did you mean") {
			t.Errorf("open a dangling link: %v", err)
		}
	})
}
