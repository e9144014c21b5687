package posixsuite

import (
	"fmt"

	"golang.org/x/sys/unix"
)

var _ = register("mkdir", withPaths(
	pathOp{op: "mkdir", args: func(t *T, p string) []any { return []any{p, uint32(0o755)} },
		check: func(t *T, p string) { t.mode(p, unix.S_IFDIR|0o755) }},
	modeCases("mkdir", unix.S_IFDIR, func(t *T, u User, p string, mode uint32) string {
		return t.do(u, "mkdir", p, mode)
	}, []uint32{0o755, 0o777, 0o700, 0o1777, 0}),
	forKinds(kinds, "EEXIST", func(t *T, k kind) {
		k.make(t, t.p("n"))
		t.expect("EEXIST", Root, "mkdir", t.p("n"), uint32(0o755))
	}),
	[]tcase{
		{"umask", func(t *T) {
			t.umask = 0o022
			t.ok("mkdir", t.p("a"), uint32(0o777))
			t.mode(t.p("a"), unix.S_IFDIR|0o755)
			t.mkdir(t.p("open"), 0o777, Root)
			t.umask = 0o077
			t.expect("0", Alice, "mkdir", t.p("open", "b"), uint32(0o777))
			t.mode(t.p("open", "b"), unix.S_IFDIR|0o700)
			t.umask = 0o777
			t.ok("mkdir", t.p("c"), uint32(0o777))
			t.mode(t.p("c"), unix.S_IFDIR)
		}},
		{"setid-bits-dropped", func(t *T) {
			t.ok("mkdir", t.p("a"), uint32(0o6777))
			t.mode(t.p("a"), unix.S_IFDIR|0o777)
		}},
		{"parent-nlink-and-times", func(t *T) {
			d := t.mkdir(t.p("d"), 0o755, Root)
			_, m, c := t.times(d)
			tick()
			t.ok("mkdir", t.p("d", "a"), uint32(0o755))
			t.nlink(d, 3)
			t.nlink(t.p("d", "a"), 2)
			_, m2, _ := t.times(d)
			if !after(m2, m) {
				t.Errorf("mkdir did not advance the parent's mtime")
			}
			t.changed(d, c, "mkdir in the directory")
		}},
		{"new-times-equal", func(t *T) {
			t.ok("mkdir", t.p("a"), uint32(0o755))
			a, m, c := t.times(t.p("a"))
			if a != m || m != c {
				t.Errorf("times of a new directory: %v %v %v", a, m, c)
			}
		}},
		{"EACCES-parent-not-writable", func(t *T) {
			t.mkdir(t.p("d"), 0o555, Alice)
			t.expect("EACCES", Alice, "mkdir", t.p("d", "a"), uint32(0o755))
			t.gone(t.p("d", "a"))
		}},
		{"EACCES-other-without-write", func(t *T) {
			t.mkdir(t.p("d"), 0o775, Alice)
			t.expect("EACCES", Bob, "mkdir", t.p("d", "a"), uint32(0o755))
			t.expect("0", Alice2, "mkdir", t.p("d", "a"), uint32(0o755))
		}},
		{"root-in-unwritable", func(t *T) {
			t.mkdir(t.p("d"), 0o555, Alice)
			t.ok("mkdir", t.p("d", "a"), uint32(0o755))
		}},
		{"ENOENT-dangling-symlink-parent", func(t *T) {
			t.ok("symlink", "none", t.p("l"))
			t.expect("ENOENT", Root, "mkdir", t.p("l", "a"), uint32(0o755))
		}},
		{"EEXIST-dangling-symlink", func(t *T) {
			t.ok("symlink", "none", t.p("l"))
			t.expect("EEXIST", Root, "mkdir", t.p("l"), uint32(0o755))
			t.gone(t.p("none"))
		}},
		{"trailing-slash", func(t *T) {
			t.ok("mkdir", t.p("a")+"/", uint32(0o755))
			t.mode(t.p("a"), unix.S_IFDIR|0o755)
		}},
	},
))

// modeCases are the cases every call that creates a file shares: the
// created file's mode (type bits ift, umask 0) for each mode, owner and
// group for root and for another user, and setgid-directory inheritance.
// mk creates p as u with mode and returns the errno's name.
func modeCases(name string, ift uint32, mk func(t *T, u User, p string, mode uint32) string, modes []uint32) []tcase {
	var out []tcase
	for _, m := range modes {
		out = append(out, tcase{"mode-" + octal(m), func(t *T) {
			if got := mk(t, Root, t.p("n"), m); got != "0" {
				t.Fatalf("%s: %s", name, got)
			}
			t.mode(t.p("n"), ift|m)
		}})
	}
	return append(out,
		tcase{"owner-is-creator", func(t *T) {
			t.mkdir(t.p("d"), 0o777, Root)
			if got := mk(t, Alice, t.p("d", "n"), 0o640); got != "0" {
				t.Fatalf("%s as alice: %s", name, got)
			}
			t.owner(t.p("d", "n"), Alice.UID, Alice.GID)
			t.mode(t.p("d", "n"), ift|0o640)
		}},
		tcase{"setgid-dir-group", func(t *T) {
			t.mkdir(t.p("d"), 0o2777, User{UID: Bob.UID, GID: Bob.GID})
			if got := mk(t, Alice, t.p("d", "n"), 0o755); got != "0" {
				t.Fatalf("%s as alice: %s", name, got)
			}
			t.owner(t.p("d", "n"), Alice.UID, Bob.GID)
			want := ift | 0o755
			if ift == unix.S_IFDIR {
				want |= unix.S_ISGID // directories inherit the bit
			}
			t.mode(t.p("d", "n"), want)
		}},
		tcase{"parent-times", func(t *T) {
			_, m, c := t.times(t.dir)
			tick()
			if got := mk(t, Root, t.p("n"), 0o644); got != "0" {
				t.Fatalf("%s: %s", name, got)
			}
			_, m2, _ := t.times(t.dir)
			if !after(m2, m) {
				t.Errorf("%s did not advance the parent's mtime", name)
			}
			t.changed(t.dir, c, name)
		}},
	)
}

func octal(m uint32) string { return fmt.Sprintf("%04o", m) }
