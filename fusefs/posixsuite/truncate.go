package posixsuite

import (
	"strings"

	"golang.org/x/sys/unix"
)

// resize is truncate(2) or ftruncate(2) on a descriptor opened O_RDWR
// (O_WRONLY for the other users' cases).
type resize struct {
	name string
	do   func(t *T, u User, p string, size int64) string
}

var (
	truncateCall  = resize{"truncate", func(t *T, u User, p string, n int64) string { return t.do(u, "truncate", p, n) }}
	ftruncateCall = resize{"ftruncate", func(t *T, u User, p string, n int64) string {
		return t.do(u, "ftruncate", p, unix.O_WRONLY, n)
	}}
)

var _ = register("truncate", withPaths(
	pathOp{op: "truncate", args: func(t *T, p string) []any { return []any{p, 3} }, prepare: regularAt,
		check: func(t *T, p string) { t.content(p, "dat") }},
	resizeCases(truncateCall),
	[]tcase{
		{"EISDIR", func(t *T) {
			t.mkdir(t.p("d"), 0o755, Root)
			t.expect("EISDIR", Root, "truncate", t.p("d"), 0)
		}},
		{"EACCES-no-write-permission", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "data")
			t.expect("EACCES", Alice, "truncate", t.p("f"), 0)
			t.content(t.p("f"), "data")
		}},
		{"EACCES-owner-without-write-bit", func(t *T) {
			t.file(t.p("f"), 0o444, Alice, "data")
			t.expect("EACCES", Alice, "truncate", t.p("f"), 0)
		}},
		{"group-write", func(t *T) {
			t.file(t.p("f"), 0o464, User{UID: Alice.UID, GID: Bob.GID}, "data")
			t.expect("0", Bob, "truncate", t.p("f"), 1)
			t.content(t.p("f"), "d")
		}},
		{"root-without-write-bit", func(t *T) {
			t.file(t.p("f"), 0o444, Alice, "data")
			t.ok("truncate", t.p("f"), 2)
			t.content(t.p("f"), "da")
		}},
		{"follows-symlink", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "data")
			t.ok("symlink", "f", t.p("l"))
			t.ok("truncate", t.p("l"), 1)
			t.content(t.p("f"), "d")
		}},
		{"fifo-EINVAL", func(t *T) {
			t.ok("mkfifo", t.p("f"), uint32(0o644))
			t.expect("EINVAL", Root, "truncate", t.p("f"), 0)
		}},
		{"ENOENT", func(t *T) { t.expect("ENOENT", Root, "truncate", t.p("none"), 0) }},
		{"while-another-descriptor-wrote", func(t *T) {
			// A write is in the file when write(2) returns: a truncate
			// by path after it cuts it, and the writer's close brings
			// nothing back.
			t.file(t.p("f"), 0o644, Root, "")
			fd, err := unix.Open(t.p("f"), unix.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := unix.Write(fd, []byte("abcdef")); err != nil {
				t.Fatal(err)
			}
			t.ok("truncate", t.p("f"), 2)
			t.size(t.p("f"), 2)
			if err := unix.Close(fd); err != nil {
				t.Fatal(err)
			}
			t.content(t.p("f"), "ab")
		}},
	},
))

var _ = register("ftruncate", withPaths(
	pathOp{op: "ftruncate", args: func(t *T, p string) []any { return []any{p, unix.O_RDWR, 3} }, prepare: regularAt,
		check: func(t *T, p string) { t.content(p, "dat") }},
	resizeCases(ftruncateCall),
	[]tcase{
		{"EINVAL-read-only-descriptor", func(t *T) {
			t.file(t.p("f"), 0o666, Root, "data")
			t.expect("EINVAL|EBADF", Root, "ftruncate", t.p("f"), unix.O_RDONLY, 0)
			t.content(t.p("f"), "data")
		}},
		{"EINVAL-directory-descriptor", func(t *T) {
			t.mkdir(t.p("d"), 0o755, Root)
			t.expect("EINVAL|EBADF|EISDIR", Root, "ftruncate", t.p("d"), unix.O_RDONLY, 0)
		}},
		{"EBADF-O_PATH", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "data")
			t.expect("EBADF", Root, "ftruncate", t.p("f"), unix.O_PATH, 0)
		}},
		{"permission-checked-at-open-only", func(t *T) {
			t.file(t.p("f"), 0o666, Alice, "data")
			fd, err := unix.Open(t.p("f"), unix.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			t.ok("chmod", t.p("f"), uint32(0o444))
			if err := unix.Ftruncate(fd, 1); err != nil {
				t.Errorf("ftruncate after chmod 0444: %v", err)
			}
			t.content(t.p("f"), "d")
		}},
		{"O_APPEND-descriptor", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "data")
			t.ok("ftruncate", t.p("f"), unix.O_WRONLY|unix.O_APPEND, 2)
			t.content(t.p("f"), "da")
		}},
		{"unlinked-open-file", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "data")
			fd, err := unix.Open(t.p("f"), unix.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			t.ok("unlink", t.p("f"))
			if err := unix.Ftruncate(fd, 10); err != nil {
				t.Fatal(err)
			}
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil || st.Size != 10 || st.Nlink != 0 {
				t.Errorf("fstat: size %d nlink %d, %v", st.Size, st.Nlink, err)
			}
		}},
	},
))

// resizeCases are what truncate and ftruncate share: growing reads back
// zeros, shrinking keeps the prefix, times advance, EINVAL for a negative
// length, and set-id bits are cleared when another user shrinks a file.
func resizeCases(r resize) []tcase {
	var out []tcase
	for _, n := range []int64{0, 1, 5, 10, 4095, 4096, 4097, 65536, 1 << 20, 5<<30 + 3} {
		out = append(out, tcase{"size-" + itoa(int(n)), func(t *T) {
			t.file(t.p("f"), 0o644, Root, "0123456789")
			if got := r.do(t, Root, t.p("f"), n); got != "0" {
				t.Fatalf("%s to %d: %s", r.name, n, got)
			}
			t.size(t.p("f"), n)
			if n <= 1<<20 {
				want := "0123456789"
				if n < 10 {
					want = want[:n]
				} else {
					want += strings.Repeat("\x00", int(n)-10)
				}
				t.content(t.p("f"), want)
			} else {
				readAt(t, t.p("f"), n-3, "\x00\x00\x00")
				readAt(t, t.p("f"), 8, "89\x00")
			}
		}})
	}
	return append(out,
		tcase{"shrink-then-grow-zeroes", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "abcdef")
			r.do(t, Root, t.p("f"), 2)
			r.do(t, Root, t.p("f"), 6)
			t.content(t.p("f"), "ab\x00\x00\x00\x00")
		}},
		tcase{"times", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "data")
			a, m, c := t.times(t.p("f"))
			tick()
			if got := r.do(t, Root, t.p("f"), 123); got != "0" {
				t.Fatal(got)
			}
			a2, m2, _ := t.times(t.p("f"))
			if !after(m2, m) {
				t.Errorf("%s did not advance mtime", r.name)
			}
			if a2 != a {
				t.Errorf("%s changed atime", r.name)
			}
			t.changed(t.p("f"), c, r.name)
		}},
		tcase{"largest-size", func(t *T) {
			// 2^63-1 is past ext4's largest file (EFBIG) and is FUSE's
			// (the kernel's MAX_LFS_FILESIZE): either refuse it, leaving
			// the file alone, or make the file that large.
			t.file(t.p("f"), 0o644, Root, "data")
			switch got := r.do(t, Root, t.p("f"), 1<<63-1); got {
			case "0":
				t.size(t.p("f"), 1<<63-1)
				readAt(t, t.p("f"), 0, "data\x00")
			case "EFBIG", "EINVAL":
				t.size(t.p("f"), 4)
			default:
				t.Errorf("%s to 2^63-1: %s, want 0, EFBIG or EINVAL", r.name, got)
			}
		}},
		tcase{"EINVAL-negative", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "data")
			if got := r.do(t, Root, t.p("f"), -1); got != "EINVAL" {
				t.Errorf("%s to -1: %s, want EINVAL", r.name, got)
			}
			t.size(t.p("f"), 4)
		}},
		tcase{"clears-setid-for-other-user", func(t *T) {
			t.file(t.p("f"), 0o6777, Root, "data")
			if got := r.do(t, Alice, t.p("f"), 1); got != "0" {
				t.Fatal(got)
			}
			t.mode(t.p("f"), unix.S_IFREG|0o777)
		}},
		tcase{"clears-suid-for-owner", func(t *T) {
			t.file(t.p("f"), 0o4755, Alice, "data")
			if got := r.do(t, Alice, t.p("f"), 1); got != "0" {
				t.Fatal(got)
			}
			t.mode(t.p("f"), unix.S_IFREG|0o755)
		}},
		tcase{"root-keeps-setid", func(t *T) {
			t.file(t.p("f"), 0o6777, Alice, "data")
			if got := r.do(t, Root, t.p("f"), 1); got != "0" {
				t.Fatal(got)
			}
			t.mode(t.p("f"), unix.S_IFREG|0o6777)
		}},
	)
}

// readAt requires the bytes of path at off.
func readAt(t *T, path string, off int64, want string) {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	buf := make([]byte, len(want))
	n, err := unix.Pread(fd, buf, off)
	if err != nil || string(buf[:n]) != want {
		t.Errorf("pread %s at %d: %q, %v; want %q", path, off, buf[:n], err, want)
	}
}
