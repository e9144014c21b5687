package posixsuite

import "golang.org/x/sys/unix"

var _ = register("rmdir", withPaths(
	pathOp{op: "rmdir", args: func(t *T, p string) []any { return []any{p} }, prepare: dirAt,
		check: func(t *T, p string) { t.gone(p) }},
	forKinds(kindsBut("dir"), "ENOTDIR", func(t *T, k kind) {
		k.make(t, t.p("n"))
		t.expect("ENOTDIR", Root, "rmdir", t.p("n"))
		t.lstat(t.p("n"))
	}),
	forKinds(kinds, "ENOTEMPTY", func(t *T, k kind) {
		t.mkdir(t.p("d"), 0o755, Root)
		k.make(t, t.p("d", "x"))
		t.expect("ENOTEMPTY|EEXIST", Root, "rmdir", t.p("d"))
		t.lstat(t.p("d", "x"))
	}),
	stickyCases("rmdir", []kind{kinds[1]}, func(t *T, u User, victim string) string {
		return t.do(u, "rmdir", victim)
	}),
	[]tcase{
		{"removes", func(t *T) {
			t.mkdir(t.p("d"), 0o755, Root)
			t.nlink(t.dir, 3)
			_, m, c := t.times(t.dir)
			tick()
			t.ok("rmdir", t.p("d"))
			t.gone(t.p("d"))
			t.nlink(t.dir, 2)
			_, m2, _ := t.times(t.dir)
			if !after(m2, m) {
				t.Errorf("rmdir did not advance the parent's mtime")
			}
			t.changed(t.dir, c, "rmdir in the directory")
		}},
		{"EINVAL-dot", func(t *T) {
			t.mkdir(t.p("d"), 0o755, Root)
			t.expect("EINVAL", Root, "rmdir", t.p("d")+"/.")
			t.lstat(t.p("d"))
		}},
		{"ENOTEMPTY-dotdot", func(t *T) {
			t.mkdir(t.p("d"), 0o755, Root)
			t.mkdir(t.p("d", "e"), 0o755, Root)
			t.expect("ENOTEMPTY|EEXIST|EBUSY", Root, "rmdir", t.p("d", "e")+"/..")
		}},
		{"ENOTDIR-symlink-to-dir", func(t *T) {
			t.mkdir(t.p("d"), 0o755, Root)
			t.ok("symlink", "d", t.p("l"))
			t.expect("ENOTDIR", Root, "rmdir", t.p("l"))
			t.lstat(t.p("d"))
		}},
		{"trailing-slash", func(t *T) {
			t.mkdir(t.p("d"), 0o755, Root)
			t.ok("rmdir", t.p("d")+"/")
			t.gone(t.p("d"))
		}},
		{"EACCES-parent-not-writable", func(t *T) {
			t.mkdir(t.p("p"), 0o555, Alice)
			t.mkdir(t.p("p", "d"), 0o777, Alice)
			t.expect("EACCES", Alice, "rmdir", t.p("p", "d"))
			t.lstat(t.p("p", "d"))
		}},
		{"by-non-owner-with-write", func(t *T) {
			t.mkdir(t.p("p"), 0o777, Root)
			t.mkdir(t.p("p", "d"), 0o700, Alice)
			t.expect("0", Bob, "rmdir", t.p("p", "d"))
			t.gone(t.p("p", "d"))
		}},
		{"ENOENT", func(t *T) { t.expect("ENOENT", Root, "rmdir", t.p("none")) }},
		{"open-directory-removed", func(t *T) {
			t.mkdir(t.p("d"), 0o755, Root)
			fd, err := unix.Open(t.p("d"), unix.O_RDONLY|unix.O_DIRECTORY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			t.ok("rmdir", t.p("d"))
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil || st.Nlink != 0 {
				t.Errorf("fstat of a removed directory: nlink %d, %v", st.Nlink, err)
			}
			if err := unix.Mkdirat(fd, "x", 0o755); err != unix.ENOENT {
				t.Errorf("mkdir in a removed directory: %v, want ENOENT", err)
			}
		}},
	},
))
