package posixsuite

import "golang.org/x/sys/unix"

var _ = register("unlink", withPaths(
	pathOp{op: "unlink", args: func(t *T, p string) []any { return []any{p} }, prepare: regularAt,
		check: func(t *T, p string) { t.gone(p) }},
	forKinds(kindsBut("dir"), "removes", func(t *T, k kind) {
		k.make(t, t.p("n"))
		_, m, c := t.times(t.dir)
		tick()
		t.ok("unlink", t.p("n"))
		t.gone(t.p("n"))
		_, m2, _ := t.times(t.dir)
		if !after(m2, m) {
			t.Errorf("unlink did not advance the parent's mtime")
		}
		t.changed(t.dir, c, "unlink in the directory")
	}),
	forKinds(kindsBut("dir"), "hard-link-remains", func(t *T, k kind) {
		k.make(t, t.p("n"))
		t.ok("link", t.p("n"), t.p("m"))
		_, _, c := t.times(t.p("m"))
		tick()
		t.ok("unlink", t.p("n"))
		t.nlink(t.p("m"), 1)
		t.changed(t.p("m"), c, "unlink of another link")
	}),
	stickyCases("unlink", kindsBut("dir", "blockdev", "chardev"), func(t *T, u User, victim string) string {
		return t.do(u, "unlink", victim)
	}),
	[]tcase{
		{"EISDIR-directory", func(t *T) {
			t.mkdir(t.p("p"), 0o777, Root)
			t.mkdir(t.p("p", "d"), 0o755, Alice)
			t.expect("EISDIR|EPERM", Root, "unlink", t.p("p", "d"))
			t.expect("EISDIR|EPERM", Alice, "unlink", t.p("p", "d"))
			t.mode(t.p("p", "d"), unix.S_IFDIR|0o755)
		}},
		{"symlink-not-target", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "kept")
			t.ok("symlink", "f", t.p("l"))
			t.ok("unlink", t.p("l"))
			t.gone(t.p("l"))
			t.content(t.p("f"), "kept")
		}},
		{"ENOTDIR-trailing-slash", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "")
			t.expect("ENOTDIR", Root, "unlink", t.p("f")+"/")
			t.lstat(t.p("f"))
		}},
		{"EACCES-parent-not-writable", func(t *T) {
			t.mkdir(t.p("d"), 0o555, Alice)
			t.file(t.p("d", "f"), 0o666, Alice, "")
			t.expect("EACCES", Alice, "unlink", t.p("d", "f"))
			t.lstat(t.p("d", "f"))
		}},
		{"EACCES-parent-not-searchable", func(t *T) {
			t.mkdir(t.p("d"), 0o755, Alice)
			t.file(t.p("d", "f"), 0o666, Alice, "")
			t.own(t.p("d"), 0o666, Alice)
			t.expect("EACCES", Alice, "unlink", t.p("d", "f"))
		}},
		{"foreign-file-in-writable-dir", func(t *T) {
			t.mkdir(t.p("d"), 0o777, Root)
			t.file(t.p("d", "f"), 0o000, Root, "")
			t.expect("0", Alice, "unlink", t.p("d", "f"))
			t.gone(t.p("d", "f"))
		}},
		{"ENOENT", func(t *T) { t.expect("ENOENT", Root, "unlink", t.p("none")) }},
		{"open-file-stays-readable-and-writable", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "before")
			fd, err := unix.Open(t.p("f"), unix.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			t.ok("unlink", t.p("f"))
			t.gone(t.p("f"))
			if _, err := unix.Pwrite(fd, []byte("+after"), 6); err != nil {
				t.Fatal(err)
			}
			if err := unix.Fsync(fd); err != nil {
				t.Errorf("fsync of an unlinked file: %v", err)
			}
			buf := make([]byte, 32)
			n, err := unix.Pread(fd, buf, 0)
			if err != nil || string(buf[:n]) != "before+after" {
				t.Errorf("read an unlinked file: %q, %v", buf[:n], err)
			}
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil || st.Nlink != 0 || st.Size != 12 {
				t.Errorf("fstat of an unlinked file: nlink %d size %d, %v", st.Nlink, st.Size, err)
			}
			if err := unix.Fchmod(fd, 0o600); err != nil {
				t.Errorf("fchmod of an unlinked file: %v", err)
			}
			t.ok("open", t.p("f"), creat|unix.O_EXCL, uint32(0o644))
			t.size(t.p("f"), 0)
		}},
		{"open-file-second-descriptor", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "x")
			a, err := unix.Open(t.p("f"), unix.O_RDONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(a)
			b, err := unix.Open(t.p("f"), unix.O_WRONLY|unix.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.ok("unlink", t.p("f"))
			if _, err := unix.Write(b, []byte("yz")); err != nil {
				t.Errorf("write to an unlinked file: %v", err)
			}
			if err := unix.Close(b); err != nil {
				t.Errorf("close an unlinked file: %v", err)
			}
			buf := make([]byte, 8)
			n, err := unix.Pread(a, buf, 0)
			if err != nil || string(buf[:max(n, 0)]) != "xyz" {
				t.Errorf("read through another descriptor: %q, %v", buf[:max(n, 0)], err)
			}
			var st unix.Stat_t
			if err := unix.Fstat(a, &st); err != nil || st.Size != 3 || st.Nlink != 0 {
				t.Errorf("fstat through another descriptor: size %d nlink %d, %v", st.Size, st.Nlink, err)
			}
		}},
	},
))
