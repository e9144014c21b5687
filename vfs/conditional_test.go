package vfs_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"
)

// errChanged is the refusal of the conditions below.
var errChanged = errors.New("changed meanwhile")

// midWrite is a stream that, once half read, lets another writer replace
// the file (as a concurrent request would).
type midWrite struct {
	r     io.Reader
	fired bool
	write func()
}

func (m *midWrite) Read(p []byte) (int, error) {
	if !m.fired {
		m.fired = true
		m.write()
	}
	return m.r.Read(p)
}

// TestWriteFileFromIf checks that the condition sees the entry as it is at
// commit, not as it was when the stream began, and that a refusal changes
// nothing.
func TestWriteFileFromIf(t *testing.T) {
	ctx := context.Background()
	f := newFS(t)
	must(t, f.WriteFile(ctx, "a", []byte("one"), 0o644))
	before, err := f.Stat(ctx, "a")
	must(t, err)
	sameAsBefore := func(fi fs.FileInfo) error {
		if fi == nil || !fi.ModTime().Equal(before.ModTime()) || fi.Size() != before.Size() {
			return errChanged
		}
		return nil
	}
	// A write between the start of the stream and its commit: refused.
	body := &midWrite{r: strings.NewReader(strings.Repeat("x", 1<<20)), write: func() {
		must(t, f.WriteFile(ctx, "a", []byte("two!"), 0o644))
	}}
	_, err = f.WriteFileFromIf(ctx, "a", body, 0o644, sameAsBefore)
	var pe *fs.PathError
	if !errors.Is(err, errChanged) || !errors.As(err, &pe) || pe.Path != "a" {
		t.Fatalf("write over a concurrent change: %v", err)
	}
	if got, _ := f.ReadFile(ctx, "a"); string(got) != "two!" {
		t.Fatalf("after the refused write: %q", got)
	}
	// Unchanged since the check: accepted.
	before, _ = f.Stat(ctx, "a")
	if _, err := f.WriteFileFromIf(ctx, "a", strings.NewReader("three"), 0o644, sameAsBefore); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.ReadFile(ctx, "a"); string(got) != "three" {
		t.Fatalf("after the accepted write: %q", got)
	}
	// Create only: nil for a missing entry; a refusal creates nothing.
	absent := func(fi fs.FileInfo) error {
		if fi != nil {
			return fs.ErrExist
		}
		return nil
	}
	if _, err := f.WriteFileFromIf(ctx, "new", strings.NewReader("n"), 0o644, absent); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteFileFromIf(ctx, "new", strings.NewReader("m"), 0o644, absent); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second create-only write: %v", err)
	}
	body = &midWrite{r: strings.NewReader("late"), write: func() { must(t, f.WriteFile(ctx, "racer", []byte("r"), 0o644)) }}
	if _, err := f.WriteFileFromIf(ctx, "racer", body, 0o644, absent); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("create-only write racing a create: %v", err)
	}
	if got, _ := f.ReadFile(ctx, "racer"); string(got) != "r" {
		t.Fatalf("racer = %q", got)
	}
}
