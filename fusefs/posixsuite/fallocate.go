package posixsuite

import (
	"strings"

	"golang.org/x/sys/unix"
)

// posix_fallocate is fallocate(2) with mode 0, which is what glibc's
// posix_fallocate calls on Linux.
var _ = register("posix_fallocate", withPaths(
	pathOp{op: "fallocate", args: func(t *T, p string) []any { return []any{p, unix.O_RDWR, 0, 0, 10} }, prepare: regularAt,
		check: func(t *T, p string) { t.size(p, 10) }},
	fallocateSizes(),
	[]tcase{
		{"within-size-keeps-size-and-data", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "0123456789")
			t.ok("fallocate", t.p("f"), unix.O_RDWR, 0, 2, 4)
			t.content(t.p("f"), "0123456789")
		}},
		{"grows-times", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "")
			_, m, c := t.times(t.p("f"))
			tick()
			t.ok("fallocate", t.p("f"), unix.O_WRONLY, 0, 0, 100)
			_, m2, _ := t.times(t.p("f"))
			if !after(m2, m) {
				t.Errorf("a growing fallocate did not advance mtime")
			}
			t.changed(t.p("f"), c, "fallocate")
		}},
		{"then-write-inside", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "")
			t.ok("fallocate", t.p("f"), unix.O_RDWR, 0, 0, 8)
			t.ok("write", t.p("f"), unix.O_WRONLY, "ab")
			t.content(t.p("f"), "ab\x00\x00\x00\x00\x00\x00")
		}},
		{"EBADF-read-only-descriptor", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "data")
			t.expect("EBADF", Root, "fallocate", t.p("f"), unix.O_RDONLY, 0, 0, 100)
			t.size(t.p("f"), 4)
		}},
		{"EINVAL-zero-length", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "data")
			t.expect("EINVAL", Root, "fallocate", t.p("f"), unix.O_RDWR, 0, 0, 0)
		}},
		{"EINVAL-negative-length", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "data")
			t.expect("EINVAL", Root, "fallocate", t.p("f"), unix.O_RDWR, 0, 0, -1)
		}},
		{"EINVAL-negative-offset", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "data")
			t.expect("EINVAL", Root, "fallocate", t.p("f"), unix.O_RDWR, 0, -1, 10)
			t.size(t.p("f"), 4)
		}},
		{"ESPIPE-fifo", func(t *T) {
			t.ok("mkfifo", t.p("p"), uint32(0o644))
			t.expect("ESPIPE", Root, "fallocate", t.p("p"), unix.O_RDWR|unix.O_NONBLOCK, 0, 0, 10)
		}},
		{"EBADF-directory", func(t *T) {
			t.mkdir(t.p("d"), 0o755, Root)
			t.expect("EBADF", Root, "fallocate", t.p("d"), unix.O_RDONLY, 0, 0, 10)
		}},
		{"other-user-with-write", func(t *T) {
			t.file(t.p("f"), 0o666, Alice, "")
			t.expect("0", Bob, "fallocate", t.p("f"), unix.O_WRONLY, 0, 0, 16)
			t.size(t.p("f"), 16)
		}},
	},
))

func fallocateSizes() []tcase {
	var out []tcase
	for _, x := range [][2]int64{{0, 1}, {0, 4096}, {5, 10}, {100, 1}, {4095, 2}, {1 << 20, 1 << 20}, {3 << 30, 4096}} {
		out = append(out, tcase{"grows-" + itoa(int(x[0])) + "+" + itoa(int(x[1])), func(t *T) {
			t.file(t.p("f"), 0o644, Root, "abc")
			t.ok("fallocate", t.p("f"), unix.O_RDWR, 0, x[0], x[1])
			end := max(x[0]+x[1], 3)
			t.size(t.p("f"), end)
			if end <= 2<<20 {
				t.content(t.p("f"), "abc"+strings.Repeat("\x00", int(end)-3))
			} else {
				readAt(t, t.p("f"), end-2, "\x00\x00")
				readAt(t, t.p("f"), 0, "abc\x00")
			}
		}})
	}
	return out
}
