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
		{"write-past-end-leaves-zeros", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "ab")
			fd, err := unix.Open(t.p("f"), unix.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := unix.Pwrite(fd, []byte("z"), 5); err != nil {
				t.Fatal(err)
			}
			t.size(t.p("f"), 6)
			unix.Close(fd)
			t.content(t.p("f"), "ab\x00\x00\x00z")
		}},
		{"two-descriptors-see-each-other", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "")
			w, err := unix.Open(t.p("f"), unix.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(w)
			r, err := unix.Open(t.p("f"), unix.O_RDONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(r)
			if _, err := unix.Write(w, []byte("seen")); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 8)
			n, err := unix.Pread(r, buf, 0)
			if err != nil || string(buf[:max(n, 0)]) != "seen" {
				t.Errorf("read through another descriptor: %q, %v", buf[:max(n, 0)], err)
			}
		}},
		{"two-writers-different-ranges", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "")
			a, err := unix.Open(t.p("f"), unix.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			b, err := unix.Open(t.p("f"), unix.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := unix.Pwrite(a, []byte("aa"), 0); err != nil {
				t.Fatal(err)
			}
			if _, err := unix.Pwrite(b, []byte("bb"), 4); err != nil {
				t.Fatal(err)
			}
			if err := unix.Close(a); err != nil {
				t.Fatal(err)
			}
			if err := unix.Close(b); err != nil {
				t.Fatal(err)
			}
			t.content(t.p("f"), "aa\x00\x00bb")
		}},
		{"two-writers-interleaved", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "")
			fds := openN(t, t.p("f"), unix.O_RDWR, 2)
			for i, w := range []struct {
				fd   int
				data string
				off  int64
			}{{fds[0], "a", 0}, {fds[1], "b", 2}, {fds[0], "c", 4}, {fds[1], "d", 6}} {
				if _, err := unix.Pwrite(w.fd, []byte(w.data), w.off); err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
			}
			for i, fd := range fds {
				buf := make([]byte, 16)
				n, err := unix.Pread(fd, buf, 0)
				if err != nil || string(buf[:max(n, 0)]) != "a\x00b\x00c\x00d" {
					t.Errorf("read through descriptor %d: %q, %v", i, buf[:max(n, 0)], err)
				}
			}
			closeAll(t, fds)
			t.content(t.p("f"), "a\x00b\x00c\x00d")
		}},
		{"two-appenders", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "")
			fds := openN(t, t.p("f"), unix.O_WRONLY|unix.O_APPEND, 2)
			for i := range 6 {
				if _, err := unix.Write(fds[i%2], []byte{'0' + byte(i)}); err != nil {
					t.Fatal(err)
				}
			}
			closeAll(t, fds)
			t.content(t.p("f"), "012345")
		}},
		{"O_TRUNC-while-another-descriptor-wrote", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "")
			fds := openN(t, t.p("f"), unix.O_WRONLY, 1)
			if _, err := unix.Write(fds[0], []byte("gone")); err != nil {
				t.Fatal(err)
			}
			t.ok("open", t.p("f"), unix.O_WRONLY|unix.O_TRUNC, 0)
			t.size(t.p("f"), 0)
			closeAll(t, fds)
			t.content(t.p("f"), "")
		}},
		{"write-clears-setid-for-other-user", func(t *T) {
			t.file(t.p("f"), 0o6777, Root, "")
			t.expect("0", Alice, "write", t.p("f"), unix.O_WRONLY, "x")
			t.mode(t.p("f"), unix.S_IFREG|0o777)
			t.content(t.p("f"), "x")
		}},
		{"write-clears-suid-for-owner", func(t *T) {
			t.file(t.p("f"), 0o4755, Alice, "")
			t.expect("0", Alice, "write", t.p("f"), unix.O_WRONLY, "x")
			t.mode(t.p("f"), unix.S_IFREG|0o755)
		}},
		{"write-by-root-keeps-setid", func(t *T) {
			t.file(t.p("f"), 0o6777, Alice, "")
			t.ok("write", t.p("f"), unix.O_WRONLY, "x")
			t.mode(t.p("f"), unix.S_IFREG|0o6777)
		}},
		{"attributes-set-while-writing-survive-close", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "")
			fds := openN(t, t.p("f"), unix.O_WRONLY, 1)
			if _, err := unix.Write(fds[0], []byte("data")); err != nil {
				t.Fatal(err)
			}
			t.ok("chmod", t.p("f"), uint32(0o600))
			t.ok("chown", t.p("f"), Alice.UID, Alice.GID)
			t.ok("utimensat", t.p("f"), "1.5", "2.5", 0)
			if _, err := unix.Write(fds[0], []byte("+more")); err != nil {
				t.Fatal(err)
			}
			closeAll(t, fds)
			t.content(t.p("f"), "data+more")
			t.mode(t.p("f"), unix.S_IFREG|0o600)
			t.owner(t.p("f"), Alice.UID, Alice.GID)
			if _, m, _ := t.times(t.p("f")); !after(m, ts(2, 5)) {
				t.Errorf("a write after utimensat left mtime at %v", m)
			}
		}},
		{"times-set-after-writing-survive-close", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "")
			fds := openN(t, t.p("f"), unix.O_WRONLY, 1)
			if _, err := unix.Write(fds[0], []byte("data")); err != nil {
				t.Fatal(err)
			}
			t.ok("utimensat", t.p("f"), "1.5", "2.5", 0)
			closeAll(t, fds)
			if a, m, _ := t.times(t.p("f")); a != ts(1, 5) || m != ts(2, 5) {
				t.Errorf("times after close: %v %v, want 1.5 2.5", a, m)
			}
			t.content(t.p("f"), "data")
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
	accs := []struct {
		name  string
		flags int
		need  uint32 // r=4 w=2
	}{{"rdonly", unix.O_RDONLY, 4}, {"wronly", unix.O_WRONLY, 2}, {"rdwr", unix.O_RDWR, 6}}
	var out []tcase
	for _, w := range classes {
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

// openN opens path n times with flags.
func openN(t *T, path string, flags, n int) []int {
	t.Helper()
	var fds []int
	for range n {
		fd, err := unix.Open(path, flags, 0)
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
	}
	return fds
}

// closeAll closes fds, requiring success.
func closeAll(t *T, fds []int) {
	t.Helper()
	for _, fd := range fds {
		if err := unix.Close(fd); err != nil {
			t.Errorf("close: %v", err)
		}
	}
}
