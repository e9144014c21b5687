package vfs_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
)

// TestRenameErrorsMatchLinux runs each rename on the host (rename(2)) and
// on the FS from the same tree and requires the same outcome: the FUSE
// mount passes these errors through as errno values.
func TestRenameErrorsMatchLinux(t *testing.T) {
	ctx := context.Background()
	errnos := map[syscall.Errno]error{
		syscall.ENOTEMPTY: errdefs.ErrNotEmpty,
		syscall.ENOTDIR:   errdefs.ErrNotDir,
		syscall.EISDIR:    errdefs.ErrIsDir,
		syscall.EINVAL:    fs.ErrInvalid,
		syscall.ENOENT:    fs.ErrNotExist,
	}
	tests := []struct {
		name     string
		tree     []string // "d/" a directory, "l>target" a symlink, else a file
		from, to string
	}{
		{"file onto its own parent", []string{"b/", "b/c"}, "b/c", "b"},
		{"file onto its grandparent", []string{"b/", "b/d/", "b/d/c"}, "b/d/c", "b"},
		{"symlink onto its own parent", []string{"b/", "b/c>x"}, "b/c", "b"},
		{"dir onto its own parent", []string{"b/", "b/c/"}, "b/c", "b"},
		{"dir onto its grandparent", []string{"b/", "b/d/", "b/d/c/"}, "b/d/c", "b"},
		{"dir onto a file", []string{"b/", "f"}, "b", "f"},
		{"file onto an empty dir", []string{"b/", "f"}, "f", "b"},
		{"file onto a non-empty dir", []string{"b/", "b/x", "f"}, "f", "b"},
		{"dir into its own subtree", []string{"b/", "b/c/"}, "b", "b/c/d"},
		{"dir onto its own child", []string{"b/", "b/c/"}, "b", "b/c"},
		{"dir onto a non-empty dir", []string{"b/", "b/c/", "d/"}, "d", "b"},
		{"dir onto an empty dir", []string{"b/", "d/", "d/x"}, "d", "b"},
		{"missing source", []string{"b/"}, "x", "b/x"},
		{"through a file", []string{"f", "g"}, "g", "f/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := t.TempDir()
			f := newFS(t)
			for _, e := range tt.tree {
				hp := filepath.Join(host, e)
				switch {
				case strings.HasSuffix(e, "/"):
					must(t, os.Mkdir(hp, 0o755))
					must(t, f.Mkdir(ctx, strings.TrimSuffix(e, "/"), 0o755))
				case strings.Contains(e, ">"):
					p, target, _ := strings.Cut(e, ">")
					must(t, os.Symlink(target, filepath.Join(host, p)))
					must(t, f.Symlink(ctx, target, p))
				default:
					must(t, os.WriteFile(hp, []byte("x"), 0o644))
					must(t, f.WriteFile(ctx, e, []byte("x"), 0o644))
				}
			}
			want := syscall.Rename(filepath.Join(host, tt.from), filepath.Join(host, tt.to))
			got := f.Rename(ctx, tt.from, tt.to)
			if want == nil {
				if got != nil {
					t.Fatalf("host renamed, vfs: %v", got)
				}
				return
			}
			sentinel := errnos[want.(syscall.Errno)]
			if sentinel == nil {
				t.Fatalf("host error %v has no sentinel here", want)
			}
			if !errors.Is(got, sentinel) {
				t.Fatalf("vfs: %v, host: %v", got, want)
			}
		})
	}
}

// TestRenameMissingDestinationDir: moving into a directory that does not
// exist names that directory, not the source (which exists).
func TestRenameMissingDestinationDir(t *testing.T) {
	ctx := context.Background()
	f := newFS(t)
	must(t, f.WriteFile(ctx, "a.txt", []byte("x"), 0o644))
	err := f.Rename(ctx, "a.txt", "missing/deeper/b.txt")
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != "missing/deeper" {
		t.Fatalf("rename into a missing directory: %v", err)
	}
	if _, err := f.Stat(ctx, "a.txt"); err != nil {
		t.Fatalf("the source after the refusal: %v", err)
	}
	// A missing source is still named as the source.
	must(t, f.Mkdir(ctx, "d", 0o755))
	if err := f.Rename(ctx, "nope", "d/x"); !errors.As(err, &pe) || pe.Path != "nope" {
		t.Fatalf("rename of a missing source: %v", err)
	}
}
