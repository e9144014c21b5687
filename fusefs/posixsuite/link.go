package posixsuite

import "golang.org/x/sys/unix"

var _ = register("link", withPaths(
	pathOp{op: "link", args: func(t *T, p string) []any { return []any{p, t.p("dst")} }, prepare: regularAt,
		check: func(t *T, p string) { t.nlink(p, 2); t.nlink(t.p("dst"), 2) }},
	dstPathCases("link"),
	forKinds(kindsBut("dir"), "creates", func(t *T, k kind) {
		p := t.p("n")
		k.make(t, p)
		before := t.lstat(p)
		_, _, pc := t.times(t.dir)
		tick()
		t.ok("link", p, t.p("m"))
		st := t.lstat(t.p("m"))
		if st.Ino != before.Ino || st.Mode != before.Mode {
			t.Errorf("link: ino %d mode %#o, want %d %#o", st.Ino, st.Mode, before.Ino, before.Mode)
		}
		t.nlink(p, 2)
		t.nlink(t.p("m"), 2)
		t.changed(p, before.Ctim, "link")
		t.changed(t.dir, pc, "link in the directory")
		t.ok("link", t.p("m"), t.p("o"))
		t.nlink(p, 3)
		_, _, c := t.times(p)
		tick()
		t.ok("unlink", p)
		t.nlink(t.p("o"), 2)
		t.changed(t.p("o"), c, "unlink of a link")
		t.ok("unlink", t.p("m"))
		t.nlink(t.p("o"), 1)
	}),
	forKinds(kinds, "EEXIST", func(t *T, k kind) {
		t.file(t.p("src"), 0o644, Root, "")
		k.make(t, t.p("dst"))
		t.expect("EEXIST", Root, "link", t.p("src"), t.p("dst"))
		t.nlink(t.p("src"), 1)
	}),
	[]tcase{
		{"EPERM-directory", func(t *T) {
			t.mkdir(t.p("d"), 0o755, Root)
			t.expect("EPERM", Root, "link", t.p("d"), t.p("e"))
			t.gone(t.p("e"))
		}},
		{"symlink-not-followed", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "")
			t.ok("symlink", "f", t.p("l"))
			t.ok("link", t.p("l"), t.p("m"))
			t.mode(t.p("m"), 0o120777)
			t.nlink(t.p("f"), 1)
			t.nlink(t.p("l"), 2)
		}},
		{"content-shared", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "one")
			t.ok("link", t.p("f"), t.p("g"))
			t.ok("write", t.p("g"), unix.O_WRONLY|unix.O_APPEND, "+two")
			t.content(t.p("f"), "one+two")
		}},
		{"open-file-linked-then-unlinked", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "a")
			fd, err := unix.Open(t.p("f"), unix.O_WRONLY|unix.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.ok("link", t.p("f"), t.p("g"))
			t.ok("unlink", t.p("f"))
			if _, err := unix.Write(fd, []byte("b")); err != nil {
				t.Fatal(err)
			}
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil || st.Nlink != 1 {
				t.Errorf("fstat: nlink %d, %v", st.Nlink, err)
			}
			if err := unix.Close(fd); err != nil {
				t.Fatal(err)
			}
			t.content(t.p("g"), "ab")
		}},
		{"ENOENT-source", func(t *T) { t.expect("ENOENT", Root, "link", t.p("none"), t.p("dst")) }},
		{"EACCES-destination-dir-not-writable", func(t *T) {
			t.file(t.p("f"), 0o644, Alice, "")
			t.mkdir(t.p("d"), 0o555, Alice)
			t.expect("EACCES", Alice, "link", t.p("f"), t.p("d", "g"))
		}},
		{"owner-may", func(t *T) {
			t.file(t.p("f"), 0o644, Alice, "")
			t.mkdir(t.p("d"), 0o755, Alice)
			t.expect("0", Alice, "link", t.p("f"), t.p("d", "g"))
			t.nlink(t.p("f"), 2)
		}},
		{"EACCES-source-dir-not-searchable", func(t *T) {
			t.mkdir(t.p("s"), 0o755, Alice)
			t.file(t.p("s", "f"), 0o644, Alice, "")
			t.mkdir(t.p("d"), 0o755, Alice)
			t.own(t.p("s"), 0o666, Alice)
			t.expect("EACCES", Alice, "link", t.p("s", "f"), t.p("d", "g"))
		}},
		{"ENOENT-destination-prefix", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "")
			t.expect("ENOENT", Root, "link", t.p("f"), t.p("none", "g"))
		}},
		{"ENOTDIR-destination-prefix", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "")
			t.expect("ENOTDIR", Root, "link", t.p("f"), t.p("f", "g"))
		}},
		{"ENOTDIR-trailing-slash-source", func(t *T) {
			t.file(t.p("f"), 0o644, Root, "")
			t.expect("ENOTDIR", Root, "link", t.p("f")+"/", t.p("g"))
		}},
	},
))

// dstPathCases are the path errors of the destination (second) argument
// of op, with a regular file as source.
func dstPathCases(op string) []tcase {
	cs := pathCases(pathOp{op: op, args: func(t *T, p string) []any { return []any{t.p("src"), p} },
		prepare: func(t *T, p string) {},
	})
	for i := range cs {
		run := cs[i].run
		cs[i].name = "dst-" + cs[i].name
		cs[i].run = func(t *T) {
			t.file(t.p("src"), 0o666, Root, "")
			run(t)
		}
	}
	return cs
}
