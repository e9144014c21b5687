package posixsuite

import "golang.org/x/sys/unix"

var _ = register("mkfifo", withPaths(
	pathOp{op: "mkfifo", args: func(t *T, p string) []any { return []any{p, uint32(0o644)} },
		check: func(t *T, p string) { t.mode(p, unix.S_IFIFO|0o644) }},
	modeCases("mkfifo", unix.S_IFIFO, func(t *T, u User, p string, mode uint32) string {
		return t.do(u, "mkfifo", p, mode)
	}, []uint32{0o644, 0o777, 0o600, 0o1777, 0}),
	forKinds(kinds, "EEXIST", func(t *T, k kind) {
		k.make(t, t.p("n"))
		t.expect("EEXIST", Root, "mkfifo", t.p("n"), uint32(0o644))
		t.mode(t.p("n"), k.ifmt|t.lstat(t.p("n")).Mode&0o7777)
	}),
	[]tcase{
		{"umask", func(t *T) {
			t.umask = 0o027
			t.ok("mkfifo", t.p("a"), uint32(0o777))
			t.mode(t.p("a"), unix.S_IFIFO|0o750)
		}},
		{"EACCES-parent-not-writable", func(t *T) {
			t.mkdir(t.p("d"), 0o555, Alice)
			t.expect("EACCES", Alice, "mkfifo", t.p("d", "a"), uint32(0o644))
		}},
		{"size-zero-nlink-one", func(t *T) {
			t.ok("mkfifo", t.p("a"), uint32(0o644))
			t.size(t.p("a"), 0)
			t.nlink(t.p("a"), 1)
		}},
		{"carries-data", func(t *T) {
			t.ok("mkfifo", t.p("a"), uint32(0o666))
			fd, err := unix.Open(t.p("a"), unix.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			if _, err := unix.Write(fd, []byte("through")); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 16)
			n, err := unix.Read(fd, buf)
			if err != nil || string(buf[:n]) != "through" {
				t.Errorf("read a fifo: %q, %v", buf[:n], err)
			}
		}},
	},
))

var _ = register("mknod", withPaths(
	pathOp{op: "mknod", args: func(t *T, p string) []any { return []any{p, uint32(unix.S_IFIFO | 0o644), 0} },
		check: func(t *T, p string) { t.mode(p, unix.S_IFIFO|0o644) }},
	modeCases("mknod", unix.S_IFIFO, func(t *T, u User, p string, mode uint32) string {
		return t.do(u, "mknod", p, unix.S_IFIFO|mode, 0)
	}, []uint32{0o644, 0o777, 0o1777, 0}),
	modeCases("mknod-regular", unix.S_IFREG, func(t *T, u User, p string, mode uint32) string {
		return t.do(u, "mknod", p, unix.S_IFREG|mode, 0)
	}, []uint32{0o644, 0o600, 0}),
	forKinds(kinds, "EEXIST", func(t *T, k kind) {
		k.make(t, t.p("n"))
		t.expect("EEXIST", Root, "mknod", t.p("n"), uint32(unix.S_IFIFO|0o644), 0)
	}),
	[]tcase{
		{"zero-type-is-regular", func(t *T) {
			t.ok("mknod", t.p("a"), uint32(0o644), 0)
			t.mode(t.p("a"), unix.S_IFREG|0o644)
			t.size(t.p("a"), 0)
		}},
		{"socket", func(t *T) {
			t.ok("mknod", t.p("a"), uint32(unix.S_IFSOCK|0o755), 0)
			t.mode(t.p("a"), unix.S_IFSOCK|0o755)
		}},
		{"devices-as-root", func(t *T) {
			for i, ft := range []uint32{unix.S_IFBLK, unix.S_IFCHR} {
				p := t.p(octal(ft))
				dev := unix.Mkdev(uint32(4+i), uint32(5+i))
				t.ok("mknod", p, ft|0o640, dev)
				st := t.lstat(p)
				if st.Mode != ft|0o640 || st.Rdev != dev {
					t.Errorf("device node: mode %#o rdev %#x, want %#o %#x", st.Mode, st.Rdev, ft|0o640, dev)
				}
				t.ok("chown", p, Alice.UID, Alice.GID)
				t.owner(p, Alice.UID, Alice.GID)
			}
		}},
		{"EPERM-devices-as-user", func(t *T) {
			t.mkdir(t.p("d"), 0o777, Root)
			t.expect("EPERM", Alice, "mknod", t.p("d", "b"), uint32(unix.S_IFBLK|0o644), unix.Mkdev(1, 2))
			t.expect("EPERM", Alice, "mknod", t.p("d", "c"), uint32(unix.S_IFCHR|0o644), unix.Mkdev(1, 3))
			t.gone(t.p("d", "b"))
			t.expect("0", Alice, "mknod", t.p("d", "f"), uint32(unix.S_IFIFO|0o644), 0)
		}},
		{"EINVAL-directory-type", func(t *T) {
			t.expect("EPERM|EINVAL", Root, "mknod", t.p("a"), uint32(unix.S_IFDIR|0o755), 0)
			t.gone(t.p("a"))
		}},
		{"umask", func(t *T) {
			t.umask = 0o077
			t.ok("mknod", t.p("a"), uint32(unix.S_IFIFO|0o666), 0)
			t.mode(t.p("a"), unix.S_IFIFO|0o600)
		}},
		{"EACCES-parent-not-writable", func(t *T) {
			t.mkdir(t.p("d"), 0o555, Alice)
			t.expect("EACCES", Alice, "mknod", t.p("d", "a"), uint32(unix.S_IFIFO|0o644), 0)
		}},
	},
))
