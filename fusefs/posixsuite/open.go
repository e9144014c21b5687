package posixsuite

import (
	"os"

	"golang.org/x/sys/unix"
)

const creat = unix.O_CREAT | unix.O_WRONLY

var _ = register("open", withPaths(
	pathOp{op: "open", args: func(t *T, p string) []any { return []any{p, creat, uint32(0o644)} },
		check: func(t *T, p string) { t.mode(p, unix.S_IFREG|0o644) }},
	modeCases("open", unix.S_IFREG, func(t *T, u User, p string, mode uint32) string {
		return t.do(u, "open", p, creat|unix.O_EXCL, mode)
	}, []uint32{0o644, 0o755, 0o600, 0o4755, 0o2755, 0o1644, 0}),
	forKinds(kinds, "EEXIST-O_EXCL", func(t *T, k kind) {
		k.make(t, t.p("n"))
		t.expect("EEXIST", Root, "open", t.p("n"), creat|unix.O_EXCL, uint32(0o644))
	}),
	forKinds(kindsBut("dir", "blockdev", "chardev", "socket", "symlink"), "ELOOP-O_NOFOLLOW", func(t *T, k kind) {
		k.make(t, t.p("n"))
		t.ok("symlink", "n", t.p("l"))
		t.expect("ELOOP", Root, "open", t.p("l"), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
		t.expect("0", Root, "open", t.p("l"), unix.O_RDONLY|unix.O_NONBLOCK, 0)
		t.expect("0", Root, "open", t.p("n"), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	}),
	forKinds(kindsBut("dir", "blockdev", "chardev", "socket", "symlink"), "ENOTDIR-O_DIRECTORY", func(t *T, k kind) {
		k.make(t, t.p("n"))
		t.expect("ENOTDIR", Root, "open", t.p("n"), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK, 0)
	}),
	accessMatrix(),
	[]tcase{
		{"umask", func(t *T) {
			t.umask = 0o022
			t.ok("open", t.p("a"), creat, uint32(0o666))
			t.mode(t.p("a"), unix.S_IFREG|0o644)
		}},
		{"O_CREAT-existing-keeps-mode-and-data", func(t *T) {
			t.file(t.p("f"), 0o600, Alice, "kept")
			t.ok("open", t.p("f"), creat, uint32(0o777))
			t.mode(t.p("f"), unix.S_IFREG|0o600)
			t.owner(t.p("f"), Alice.UID, Alice.GID)
			t.content(t.p("f"), "kept")
		}},
		{"mode-0000-writable-by-creator", func(t *T) {
			t.mkdir(t.p("d"), 0o777, Root)
			t.expect("0", Alice, "write", t.p("d", "f"), unix.O_CREAT|unix.O_RDWR, "written")
			t.mode(t.p("d", "f"), unix.S_IFREG)
			t.expect("EACCES", Alice, "open", t.p("d", "f"), unix.O_RDONLY, 0)
			t.content(t.p("d", "f"), "written")
		}},
		{"O_TRUNC", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "0123456789")
			_, m, c := t.times(t.p("f"))
			tick()
			t.ok("open", t.p("f"), unix.O_WRONLY|unix.O_TRUNC, 0)
			t.size(t.p("f"), 0)
			_, m2, _ := t.times(t.p("f"))
			if !after(m2, m) {
				t.Errorf("O_TRUNC did not advance mtime")
			}
			t.changed(t.p("f"), c, "O_TRUNC")
		}},
		{"O_TRUNC-empty-file", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "")
			t.ok("open", t.p("f"), unix.O_RDWR|unix.O_TRUNC, 0)
			t.size(t.p("f"), 0)
		}},
		{"O_CREAT-new-times", func(t *T) {
			t.ok("open", t.p("f"), creat, uint32(0o644))
			a, m, c := t.times(t.p("f"))
			if a != m || m != c {
				t.Errorf("times of a new file: %v %v %v", a, m, c)
			}
		}},
		{"EACCES-O_TRUNC-read-only", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "data")
			t.expect("EACCES", Alice, "open", t.p("f"), unix.O_RDONLY|unix.O_TRUNC, 0)
			t.content(t.p("f"), "data")
		}},
		{"O_APPEND", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "head")
			t.ok("write", t.p("f"), unix.O_WRONLY|unix.O_APPEND, "+tail")
			t.ok("write", t.p("f"), unix.O_RDWR|unix.O_APPEND, "+more")
			t.content(t.p("f"), "head+tail+more")
		}},
		{"O_APPEND-after-seek", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "abc")
			f, err := os.OpenFile(t.p("f"), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := unix.Seek(int(f.Fd()), 0, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := unix.Write(int(f.Fd()), []byte("d")); err != nil {
				t.Fatal(err)
			}
			f.Close()
			t.content(t.p("f"), "abcd")
		}},
		{"without-O_APPEND-overwrites", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "abcdef")
			t.ok("write", t.p("f"), unix.O_WRONLY, "XY")
			t.content(t.p("f"), "XYcdef")
		}},
		{"EISDIR-write", func(t *T) {
			t.mkdir(t.p("d"), 0o755, Root)
			t.expect("EISDIR", Root, "open", t.p("d"), unix.O_WRONLY, 0)
			t.expect("EISDIR", Root, "open", t.p("d"), unix.O_RDWR, 0)
			t.expect("EISDIR", Root, "open", t.p("d"), unix.O_RDONLY|unix.O_TRUNC, 0)
			t.expect("EISDIR", Root, "open", t.p("d"), creat, uint32(0o644))
			t.expect("0", Root, "open", t.p("d"), unix.O_RDONLY, 0)
		}},
		{"ENXIO-socket", func(t *T) {
			t.ok("bind", t.p("s"))
			t.expect("ENXIO", Root, "open", t.p("s"), unix.O_RDONLY, 0)
		}},
		{"ENXIO-fifo-without-reader", func(t *T) {
			t.ok("mkfifo", t.p("f"), uint32(0o666))
			t.expect("ENXIO", Root, "open", t.p("f"), unix.O_WRONLY|unix.O_NONBLOCK, 0)
			t.expect("0", Root, "open", t.p("f"), unix.O_RDONLY|unix.O_NONBLOCK, 0)
		}},
		{"ELOOP-symlink-loop", func(t *T) {
			t.ok("symlink", "b", t.p("a"))
			t.ok("symlink", "a", t.p("b"))
			t.expect("ELOOP", Root, "open", t.p("a"), unix.O_RDONLY, 0)
			t.expect("ELOOP", Root, "open", t.p("a"), creat, uint32(0o644))
		}},
		{"O_CREAT-through-dangling-symlink", func(t *T) {
			t.ok("symlink", "target", t.p("l"))
			t.ok("open", t.p("l"), creat, uint32(0o640))
			t.mode(t.p("target"), unix.S_IFREG|0o640)
			t.expect("EEXIST", Root, "open", t.p("l"), creat|unix.O_EXCL, uint32(0o640))
		}},
		{"ENOENT-no-O_CREAT", func(t *T) { t.expect("ENOENT", Root, "open", t.p("none"), unix.O_RDONLY, 0) }},
		{"ENOENT-dangling-symlink", func(t *T) {
			t.ok("symlink", "none", t.p("l"))
			t.expect("ENOENT", Root, "open", t.p("l"), unix.O_RDONLY, 0)
		}},
		{"ENOTDIR-trailing-slash", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "")
			t.expect("ENOTDIR", Root, "open", t.p("f")+"/", unix.O_RDONLY, 0)
		}},
		{"EISDIR-O_CREAT-trailing-slash", func(t *T) {
			t.expect("EISDIR", Root, "open", t.p("f")+"/", creat, uint32(0o644))
			t.gone(t.p("f"))
		}},
		{"EACCES-create-in-unwritable", func(t *T) {
			t.mkdir(t.p("d"), 0o555, Alice)
			t.expect("EACCES", Alice, "open", t.p("d", "f"), creat, uint32(0o644))
			t.gone(t.p("d", "f"))
		}},
		{"O_EXCL-by-other-user", func(t *T) {
			t.mkdir(t.p("d"), 0o777, Root)
			t.expect("0", Alice, "open", t.p("d", "f"), creat|unix.O_EXCL, uint32(0o666))
			t.expect("EEXIST", Bob, "open", t.p("d", "f"), creat|unix.O_EXCL, uint32(0o666))
		}},
	},
))

// accessMatrix checks open's permission rules class by class: for each
// of owner, group (primary and supplementary) and other, each pattern of
// read and write bits granted to that class only, and each access mode.
func accessMatrix() []tcase {
	type who struct {
		name  string
		u     User
		shift uint
	}
	whos := []who{
		{"owner", Alice, 6},
		{"group", Bob, 3},
		{"suppl-group", User{Name: "bob-as-other+group", UID: 65530, GID: 65530, Groups: []uint32{Bob.GID}}, 3},
		{"other", User{Name: "other", UID: 65530, GID: 65530}, 0},
	}
	accs := []struct {
		name  string
		flags int
		need  uint32 // r=4 w=2
	}{{"rdonly", unix.O_RDONLY, 4}, {"wronly", unix.O_WRONLY, 2}, {"rdwr", unix.O_RDWR, 6}}
	var out []tcase
	for _, w := range whos {
		for _, bits := range []uint32{0, 2, 4, 6} {
			for _, a := range accs {
				out = append(out, tcase{"access/" + w.name + "-" + octal(bits) + "-" + a.name, func(t *T) {
					// Alice owns the file; its group is Bob's. Every other
					// class gets the complement, so only w's class decides.
					mode := bits << w.shift
					all := uint32(0o666) &^ (0o7 << w.shift)
					p := t.file(t.p("f"), mode|all, User{UID: Alice.UID, GID: Bob.GID}, "")
					want := "EACCES"
					if bits&a.need == a.need {
						want = "0"
					}
					t.expect(want, w.u, "open", p, a.flags, 0)
				}})
			}
		}
	}
	return out
}
