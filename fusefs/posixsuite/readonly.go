package posixsuite

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// ReadOnlyFixture makes in dir, an empty directory of a writable file
// system, what RunReadOnly expects to find once the same tree is mounted
// read-only: a file f holding "data", an empty directory e, a directory
// d holding a file g, a symbolic link l to f and a FIFO p.
func ReadOnlyFixture(t testing.TB, dir string) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "f"), []byte("data"), 0o644))
	must(os.Chmod(filepath.Join(dir, "f"), 0o644))
	must(os.Mkdir(filepath.Join(dir, "e"), 0o755))
	must(os.Mkdir(filepath.Join(dir, "d"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "d", "g"), nil, 0o644))
	must(os.Symlink("f", filepath.Join(dir, "l")))
	must(unix.Mkfifo(filepath.Join(dir, "p"), 0o644))
}

// RunReadOnly checks that dir, ReadOnlyFixture's tree on a read-only
// file system, refuses every change with EROFS (or with the error that
// comes first, as EEXIST does before EROFS on Linux) and still reads.
// It runs as root, so no permission check is what refuses.
func RunReadOnly(t *testing.T, dir string) {
	if os.Geteuid() != 0 {
		t.Fatal("posixsuite: the suite runs as root")
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	cases := []struct {
		name string
		want string
		op   string
		args []any
	}{
		{"open-wronly", "EROFS", "open", []any{p("f"), unix.O_WRONLY, 0}},
		{"open-rdwr", "EROFS", "open", []any{p("f"), unix.O_RDWR, 0}},
		{"open-trunc", "EROFS", "open", []any{p("f"), unix.O_RDONLY | unix.O_TRUNC, 0}},
		{"open-creat-new", "EROFS", "open", []any{p("new"), creat, uint32(0o644)}},
		{"open-creat-existing-rdonly", "0", "open", []any{p("f"), unix.O_CREAT | unix.O_RDONLY, uint32(0o644)}},
		{"open-creat-excl-existing", "EEXIST", "open", []any{p("f"), creat | unix.O_EXCL, uint32(0o644)}},
		{"open-rdonly", "0", "open", []any{p("f"), unix.O_RDONLY, 0}},
		{"open-fifo-rdonly", "0", "open", []any{p("p"), unix.O_RDONLY | unix.O_NONBLOCK, 0}},
		{"read", "0", "read", []any{p("l")}},
		{"readdir", "0", "readdir", []any{p("d")}},
		{"readlink", "0", "readlink", []any{p("l")}},
		{"stat", "0", "stat", []any{p("d/g")}},
		{"mkdir", "EROFS", "mkdir", []any{p("new"), uint32(0o755)}},
		{"mkdir-existing", "EEXIST", "mkdir", []any{p("d"), uint32(0o755)}},
		{"mkfifo", "EROFS", "mkfifo", []any{p("new"), uint32(0o644)}},
		{"mknod", "EROFS", "mknod", []any{p("new"), uint32(unix.S_IFIFO | 0o644), 0}},
		{"symlink", "EROFS", "symlink", []any{"f", p("new")}},
		{"symlink-existing", "EEXIST", "symlink", []any{"f", p("l")}},
		{"link", "EROFS", "link", []any{p("f"), p("new")}},
		{"rename", "EROFS", "rename", []any{p("f"), p("new")}},
		{"rename-exchange", "EROFS", "renameat2", []any{p("f"), p("e"), unix.RENAME_EXCHANGE}},
		{"unlink-file", "EROFS", "unlink", []any{p("f")}},
		{"unlink-symlink", "EROFS", "unlink", []any{p("l")}},
		{"unlink-fifo", "EROFS", "unlink", []any{p("p")}},
		{"rmdir-empty", "EROFS", "rmdir", []any{p("e")}},
		{"chmod", "EROFS", "chmod", []any{p("f"), uint32(0o600)}},
		{"chmod-dir", "EROFS", "chmod", []any{p("d"), uint32(0o700)}},
		{"chown", "EROFS", "chown", []any{p("f"), 1, 1}},
		{"lchown-symlink", "EROFS", "lchown", []any{p("l"), 1, 1}},
		{"truncate", "EROFS", "truncate", []any{p("f"), 0}},
		{"utimensat", "EROFS", "utimensat", []any{p("f"), "1.1", "2.2", 0}},
		{"utimensat-now", "EROFS", "utimensat", []any{p("f"), "now", "now", 0}},
	}
	exe := childBinary(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tt := &T{T: t, dir: dir, exe: exe}
			tt.expect(c.want, Root, c.op, c.args...)
		})
	}
	t.Run("unchanged", func(t *testing.T) {
		tt := &T{T: t, dir: dir, exe: exe}
		tt.content(p("f"), "data")
		tt.mode(p("f"), unix.S_IFREG|0o644)
		tt.owner(p("f"), 0, 0)
		tt.mode(p("e"), unix.S_IFDIR|0o755)
		tt.mode(p("l"), unix.S_IFLNK|0o777)
		tt.mode(p("p"), unix.S_IFIFO|0o644)
		tt.gone(p("new"))
	})
}
