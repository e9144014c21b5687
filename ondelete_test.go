package forkspace

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
)

// TestOnDelete: Delete calls Options.OnDelete with the deleted
// workspace's ID once the deletion committed, returns the hook's error
// with the workspace deleted all the same, and does not call it when
// nothing was deleted.
func TestOnDelete(t *testing.T) {
	ctx := context.Background()
	var heard []string
	fail := errors.New("host cleanup failed")
	st, err := Open(ctx, Options{Dir: filepath.Join(t.TempDir(), "store"), OnDelete: func(ctx context.Context, id string) error {
		heard = append(heard, id)
		if len(heard) == 2 {
			return fail
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []string
	for _, name := range []string{"a", "b"} {
		w, err := st.Create(ctx, name, CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, w.ID())
	}
	if err := st.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Delete(missing) = %v, want fs.ErrNotExist", err)
	}
	if err := st.Delete(ctx, "b"); !errors.Is(err, fail) {
		t.Fatalf("Delete(b) with a failing hook = %v, want its error", err)
	}
	if _, err := st.Workspace(ctx, "b"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("b after a failing hook: %v, want it deleted", err)
	}
	if len(heard) != 2 || heard[0] != ids[0] || heard[1] != ids[1] {
		t.Errorf("OnDelete heard %q, want %q", heard, ids)
	}
}
