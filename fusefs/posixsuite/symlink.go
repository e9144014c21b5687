package posixsuite

import (
	"strings"

	"golang.org/x/sys/unix"
)

var _ = register("symlink", withPaths(
	pathOp{op: "symlink", args: func(t *T, p string) []any { return []any{"target", p} },
		check: func(t *T, p string) { t.mode(p, unix.S_IFLNK|0o777) }},
	forKinds(kinds, "EEXIST", func(t *T, k kind) {
		k.make(t, t.p("n"))
		t.expect("EEXIST", Root, "symlink", "target", t.p("n"))
		t.mode(t.p("n"), k.ifmt|t.lstat(t.p("n")).Mode&0o7777)
	}),
	targetCases(),
	[]tcase{
		{"owner-and-mode", func(t *T) {
			t.mkdir(t.p("d"), 0o777, Root)
			t.umask = 0o077
			t.expect("0", Alice, "symlink", "target", t.p("d", "l"))
			t.mode(t.p("d", "l"), unix.S_IFLNK|0o777)
			t.owner(t.p("d", "l"), Alice.UID, Alice.GID)
		}},
		{"setgid-dir-group", func(t *T) {
			t.mkdir(t.p("d"), 0o2777, Bob)
			t.expect("0", Alice, "symlink", "target", t.p("d", "l"))
			t.owner(t.p("d", "l"), Alice.UID, Bob.GID)
		}},
		{"followed", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "through")
			t.ok("symlink", "f", t.p("l"))
			t.ok("symlink", "l", t.p("l2"))
			t.mkdir(t.p("d"), 0o755, Root)
			t.ok("symlink", "../f", t.p("d", "up"))
			t.content(t.p("l2"), "through")
			t.content(t.p("d", "up"), "through")
			t.ok("symlink", t.p("f"), t.p("abs"))
			t.content(t.p("abs"), "through")
		}},
		{"dangling", func(t *T) {
			t.ok("symlink", "none", t.p("l"))
			t.mode(t.p("l"), unix.S_IFLNK|0o777)
			t.expect("ENOENT", Root, "stat", t.p("l"))
			t.expect("0", Root, "lstat", t.p("l"))
		}},
		{"parent-times", func(t *T) {
			_, m, c := t.times(t.dir)
			tick()
			t.ok("symlink", "x", t.p("l"))
			_, m2, _ := t.times(t.dir)
			if !after(m2, m) {
				t.Errorf("symlink did not advance the parent's mtime")
			}
			t.changed(t.dir, c, "symlink")
		}},
		{"EACCES-parent-not-writable", func(t *T) {
			t.mkdir(t.p("d"), 0o555, Alice)
			t.expect("EACCES", Alice, "symlink", "x", t.p("d", "l"))
		}},
		{"ENOENT-empty-target", func(t *T) {
			t.expect("ENOENT", Root, "symlink", "", t.p("l"))
			t.gone(t.p("l"))
		}},
		{"readlink-EINVAL-not-symlink", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "")
			t.expect("EINVAL", Root, "readlink", t.p("f"))
			t.expect("EINVAL", Root, "readlink", t.dir)
		}},
		{"readlink-ENOENT", func(t *T) { t.expect("ENOENT", Root, "readlink", t.p("none")) }},
		{"readlink-by-other-user", func(t *T) {
			t.ok("symlink", "secret", t.p("l"))
			t.expect("0", Bob, "readlink", t.p("l"))
		}},
		{"trailing-slash-follows", func(t *T) {
			t.mkdir(t.p("d"), 0o755, Root)
			t.ok("symlink", "d", t.p("l"))
			var st unix.Stat_t
			if err := unix.Lstat(t.p("l")+"/", &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
				t.Errorf("lstat l/: mode %#o, %v", st.Mode, err)
			}
		}},
	},
))

// targetCases store targets of several lengths up to PATH_MAX-1 and
// refuse one of PATH_MAX; readlink and lstat give the target back whole.
func targetCases() []tcase {
	var out []tcase
	for _, n := range []int{1, 100, 255, 256, 1024, 4000, 4095} {
		out = append(out, tcase{"target-" + itoa(n), func(t *T) {
			target := strings.Repeat("t/", n/2) + strings.Repeat("u", n%2)
			t.ok("symlink", target, t.p("l"))
			got, err := readlink(t.p("l"))
			if err != nil || got != target {
				t.Errorf("readlink: %d bytes, %v; want %d", len(got), err, len(target))
			}
			t.size(t.p("l"), int64(n))
		}})
	}
	out = append(out, tcase{"ENAMETOOLONG-target-4096", func(t *T) {
		t.expect("ENAMETOOLONG", Root, "symlink", strings.Repeat("t", 4096), t.p("l"))
		t.gone(t.p("l"))
	}})
	return out
}

func readlink(p string) (string, error) {
	buf := make([]byte, 8192)
	n, err := unix.Readlink(p, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
