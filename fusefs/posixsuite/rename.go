package posixsuite

import "golang.org/x/sys/unix"

var _ = register("rename", withPaths(
	pathOp{op: "rename", args: func(t *T, p string) []any { return []any{p, t.p("dst")} }, prepare: regularAt,
		check: func(t *T, p string) { t.gone(p); t.mode(t.p("dst"), unix.S_IFREG|0o644) }},
	dstPathCases("rename"),
	forKinds(kinds, "moves", func(t *T, k kind) {
		k.make(t, t.p("n"))
		st := t.lstat(t.p("n"))
		_, _, pc := t.times(t.dir)
		tick()
		t.ok("rename", t.p("n"), t.p("m"))
		t.gone(t.p("n"))
		got := t.lstat(t.p("m"))
		if got.Ino != st.Ino || got.Mode != st.Mode || got.Nlink != st.Nlink {
			t.Errorf("renamed: ino %d mode %#o nlink %d, was %d %#o %d", got.Ino, got.Mode, got.Nlink, st.Ino, st.Mode, st.Nlink)
		}
		t.changed(t.p("m"), st.Ctim, "rename")
		t.changed(t.dir, pc, "rename in the directory")
		t.mkdir(t.p("sub"), 0o755, Root)
		t.ok("rename", t.p("m"), t.p("sub", "o"))
		t.gone(t.p("m"))
		if t.lstat(t.p("sub", "o")).Ino != st.Ino {
			t.Errorf("moved to another directory: another inode")
		}
	}),
	forKinds(kindsBut("dir"), "over-non-dir", func(t *T, k kind) {
		k.make(t, t.p("n"))
		t.file(t.p("old"), 0o644, Root, "old")
		t.ok("link", t.p("old"), t.p("keep"))
		ino := t.lstat(t.p("n")).Ino
		_, _, c := t.times(t.p("keep"))
		tick()
		t.ok("rename", t.p("n"), t.p("old"))
		t.gone(t.p("n"))
		if t.lstat(t.p("old")).Ino != ino {
			t.Errorf("rename over a file: the old file is still there")
		}
		t.nlink(t.p("keep"), 1)
		t.content(t.p("keep"), "old")
		t.changed(t.p("keep"), c, "rename over a link of it")
	}),
	forKinds(kindsBut("dir"), "EISDIR-over-dir", func(t *T, k kind) {
		k.make(t, t.p("n"))
		t.mkdir(t.p("d"), 0o755, Root)
		t.expect("EISDIR", Root, "rename", t.p("n"), t.p("d"))
		t.lstat(t.p("n"))
	}),
	forKinds(kindsBut("dir"), "ENOTDIR-dir-over", func(t *T, k kind) {
		k.make(t, t.p("n"))
		t.mkdir(t.p("d"), 0o755, Root)
		t.expect("ENOTDIR", Root, "rename", t.p("d"), t.p("n"))
		t.mode(t.p("d"), unix.S_IFDIR|0o755)
	}),
	forKinds(kinds, "ENOTEMPTY", func(t *T, k kind) {
		t.mkdir(t.p("a"), 0o755, Root)
		t.mkdir(t.p("b"), 0o755, Root)
		k.make(t, t.p("b", "x"))
		t.expect("ENOTEMPTY|EEXIST", Root, "rename", t.p("a"), t.p("b"))
		t.lstat(t.p("b", "x"))
	}),
	forKinds(kinds, "exchange", func(t *T, k kind) {
		k.make(t, t.p("n"))
		t.file(t.p("f"), 0o644, Root, "f")
		a, b := t.lstat(t.p("n")).Ino, t.lstat(t.p("f")).Ino
		t.ok("renameat2", t.p("n"), t.p("f"), unix.RENAME_EXCHANGE)
		if t.lstat(t.p("n")).Ino != b || t.lstat(t.p("f")).Ino != a {
			t.Errorf("RENAME_EXCHANGE did not swap")
		}
		t.mode(t.p("f"), k.ifmt|t.lstat(t.p("f")).Mode&0o7777)
		t.content(t.p("n"), "f")
	}),
	forKinds(kinds, "noreplace-EEXIST", func(t *T, k kind) {
		k.make(t, t.p("n"))
		t.file(t.p("f"), 0o644, Root, "f")
		t.expect("EEXIST", Root, "renameat2", t.p("f"), t.p("n"), unix.RENAME_NOREPLACE)
		t.content(t.p("f"), "f")
	}),
	stickyCases("rename", kindsBut("blockdev", "chardev"), func(t *T, u User, victim string) string {
		return t.do(u, "rename", victim, t.p("moved"))
	}),
	stickyCases("rename-over", kindsBut("blockdev", "chardev"), func(t *T, u User, victim string) string {
		p := t.p("mine")
		if t.lstat(victim).Mode&unix.S_IFMT == unix.S_IFDIR {
			t.mkdir(p, 0o755, u)
		} else {
			t.file(p, 0o644, u, "")
		}
		return t.do(u, "rename", p, victim)
	}),
	[]tcase{
		{"dir-over-empty-dir", func(t *T) {
			t.mkdir(t.p("a"), 0o755, Root)
			t.mkdir(t.p("a", "x"), 0o755, Root)
			t.mkdir(t.p("b"), 0o700, Root)
			ino := t.lstat(t.p("a")).Ino
			t.ok("rename", t.p("a"), t.p("b"))
			t.gone(t.p("a"))
			if st := t.lstat(t.p("b")); st.Ino != ino || st.Mode != unix.S_IFDIR|0o755 {
				t.Errorf("rename over an empty directory: ino %d mode %#o", st.Ino, st.Mode)
			}
			t.lstat(t.p("b", "x"))
		}},
		{"dir-updates-dotdot-and-nlink", func(t *T) {
			t.mkdir(t.p("a"), 0o755, Root)
			t.mkdir(t.p("b"), 0o755, Root)
			t.mkdir(t.p("a", "d"), 0o755, Root)
			t.nlink(t.p("a"), 3)
			t.ok("rename", t.p("a", "d"), t.p("b", "d"))
			t.nlink(t.p("a"), 2)
			t.nlink(t.p("b"), 3)
			var dd, b unix.Stat_t
			if err := unix.Stat(t.p("b", "d")+"/..", &dd); err != nil {
				t.Fatal(err)
			}
			if err := unix.Stat(t.p("b"), &b); err != nil {
				t.Fatal(err)
			}
			if dd.Ino != b.Ino {
				t.Errorf(".. of a moved directory: ino %d, want %d", dd.Ino, b.Ino)
			}
		}},
		{"over-open-file", func(t *T) {
			// The replaced file lives on for its descriptors, unlinked.
			t.file(t.p("a"), 0o644, Root, "new")
			t.file(t.p("b"), 0o644, Root, "old")
			fd, err := unix.Open(t.p("b"), unix.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			t.ok("rename", t.p("a"), t.p("b"))
			t.content(t.p("b"), "new")
			if _, err := unix.Pwrite(fd, []byte("!"), 3); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 8)
			n, err := unix.Pread(fd, buf, 0)
			if err != nil || string(buf[:max(n, 0)]) != "old!" {
				t.Errorf("read the replaced file: %q, %v", buf[:max(n, 0)], err)
			}
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil || st.Nlink != 0 || st.Size != 4 {
				t.Errorf("fstat of the replaced file: nlink %d size %d, %v", st.Nlink, st.Size, err)
			}
			if err := unix.Fchmod(fd, 0o600); err != nil {
				t.Errorf("fchmod of the replaced file: %v", err)
			}
			t.content(t.p("b"), "new")
			t.mode(t.p("b"), unix.S_IFREG|0o644)
		}},
		{"open-file-keeps-working", func(t *T) {
			t.file(t.p("a"), 0o644, Root, "x")
			fd, err := unix.Open(t.p("a"), unix.O_WRONLY|unix.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.mkdir(t.p("d"), 0o755, Root)
			t.ok("rename", t.p("a"), t.p("d", "b"))
			if _, err := unix.Write(fd, []byte("y")); err != nil {
				t.Fatal(err)
			}
			if err := unix.Close(fd); err != nil {
				t.Fatal(err)
			}
			t.content(t.p("d", "b"), "xy")
		}},
		{"same-file-hard-links", func(t *T) {
			t.file(t.p("a"), 0o644, Root, "x")
			t.ok("link", t.p("a"), t.p("b"))
			t.ok("rename", t.p("a"), t.p("b"))
			t.nlink(t.p("a"), 2)
			t.nlink(t.p("b"), 2)
		}},
		{"to-itself", func(t *T) {
			t.file(t.p("a"), 0o644, Root, "x")
			t.ok("rename", t.p("a"), t.p("a"))
			t.content(t.p("a"), "x")
		}},
		{"EINVAL-into-own-subtree", func(t *T) {
			t.mkdir(t.p("a"), 0o755, Root)
			t.mkdir(t.p("a", "b"), 0o755, Root)
			t.expect("EINVAL", Root, "rename", t.p("a"), t.p("a", "b", "c"))
			t.expect("EINVAL", Root, "rename", t.p("a"), t.p("a", "c"))
			t.lstat(t.p("a", "b"))
		}},
		{"ENOTEMPTY-parent-over-child", func(t *T) {
			t.mkdir(t.p("a"), 0o755, Root)
			t.mkdir(t.p("a", "b"), 0o755, Root)
			t.expect("ENOTEMPTY|EEXIST|EINVAL", Root, "rename", t.p("a", "b"), t.p("a"))
		}},
		{"EINVAL-dot", func(t *T) {
			t.mkdir(t.p("a"), 0o755, Root)
			t.expect("EINVAL|EBUSY", Root, "rename", t.p("a")+"/.", t.p("b"))
			t.expect("EINVAL|EBUSY", Root, "rename", t.p("a")+"/..", t.p("b"))
		}},
		{"ENOENT-source", func(t *T) { t.expect("ENOENT", Root, "rename", t.p("none"), t.p("b")) }},
		{"EACCES-source-dir-not-writable", func(t *T) {
			t.mkdir(t.p("s"), 0o555, Alice)
			t.file(t.p("s", "f"), 0o644, Alice, "")
			t.mkdir(t.p("d"), 0o755, Alice)
			t.expect("EACCES", Alice, "rename", t.p("s", "f"), t.p("d", "f"))
			t.lstat(t.p("s", "f"))
		}},
		{"EACCES-destination-dir-not-writable", func(t *T) {
			t.mkdir(t.p("s"), 0o755, Alice)
			t.file(t.p("s", "f"), 0o644, Alice, "")
			t.mkdir(t.p("d"), 0o555, Alice)
			t.expect("EACCES", Alice, "rename", t.p("s", "f"), t.p("d", "f"))
			t.expect("0", Alice, "rename", t.p("s", "f"), t.p("s", "g"))
		}},
		{"EACCES-move-foreign-dir-between-parents", func(t *T) {
			// Moving a directory to another parent rewrites its "..",
			// which needs write permission on the directory itself.
			t.mkdir(t.p("s"), 0o777, Root)
			t.mkdir(t.p("d"), 0o777, Root)
			t.mkdir(t.p("s", "x"), 0o755, Root)
			t.expect("EACCES", Alice, "rename", t.p("s", "x"), t.p("d", "x"))
			t.expect("0", Alice, "rename", t.p("s", "x"), t.p("s", "y"))
		}},
		{"noreplace-new", func(t *T) {
			t.file(t.p("a"), 0o644, Root, "a")
			t.ok("renameat2", t.p("a"), t.p("b"), unix.RENAME_NOREPLACE)
			t.gone(t.p("a"))
			t.content(t.p("b"), "a")
		}},
		{"exchange-ENOENT", func(t *T) {
			t.file(t.p("a"), 0o644, Root, "a")
			t.expect("ENOENT", Root, "renameat2", t.p("a"), t.p("b"), unix.RENAME_EXCHANGE)
			t.content(t.p("a"), "a")
		}},
		{"exchange-dirs-across-parents", func(t *T) {
			t.mkdir(t.p("a"), 0o755, Root)
			t.mkdir(t.p("b"), 0o755, Root)
			t.mkdir(t.p("a", "x"), 0o700, Root)
			t.file(t.p("b", "y"), 0o644, Root, "y")
			t.ok("renameat2", t.p("a", "x"), t.p("b", "y"), unix.RENAME_EXCHANGE)
			t.mode(t.p("a", "x"), unix.S_IFREG|0o644)
			t.mode(t.p("b", "y"), unix.S_IFDIR|0o700)
			t.nlink(t.p("a"), 2)
			t.nlink(t.p("b"), 3)
		}},
		{"EINVAL-exchange-and-noreplace", func(t *T) {
			t.file(t.p("a"), 0o644, Root, "")
			t.file(t.p("b"), 0o644, Root, "")
			t.expect("EINVAL", Root, "renameat2", t.p("a"), t.p("b"), unix.RENAME_EXCHANGE|unix.RENAME_NOREPLACE)
		}},
		{"ctime-of-replaced-dir-parent", func(t *T) {
			t.mkdir(t.p("a"), 0o755, Root)
			t.mkdir(t.p("b"), 0o755, Root)
			t.file(t.p("a", "f"), 0o644, Root, "")
			_, ma, ca := t.times(t.p("a"))
			_, _, cb := t.times(t.p("b"))
			tick()
			t.ok("rename", t.p("a", "f"), t.p("b", "f"))
			_, ma2, _ := t.times(t.p("a"))
			if !after(ma2, ma) {
				t.Errorf("rename did not advance the source directory's mtime")
			}
			t.changed(t.p("a"), ca, "rename out of the directory")
			t.changed(t.p("b"), cb, "rename into the directory")
		}},
	},
))

// stickyCases check the sticky-directory rule for an op that removes or
// replaces victim: in a sticky directory only the owner of the entry, the
// owner of the directory and root may; alone, write permission on the
// directory is not enough. do runs the op as u and returns the errno.
func stickyCases(name string, ks []kind, do func(t *T, u User, victim string) string) []tcase {
	type c struct {
		who      string
		u        User
		dirOwner User
		want     string
	}
	cs := []c{
		{"other", Bob, Root, "EPERM|EACCES"},
		{"file-owner", Alice, Root, "0"},
		{"dir-owner", Bob, Bob, "0"},
		{"root", Root, Alice, "0"},
	}
	var out []tcase
	for _, k := range ks {
		for _, x := range cs {
			out = append(out, tcase{"sticky/" + name + "-" + k.name + "-by-" + x.who, func(t *T) {
				// t.dir is 0755: the sticky directory d is the stage.
				d := t.mkdir(t.p("d"), 0o1777, x.dirOwner)
				t.dir = d
				v := t.p("victim")
				k.make(t, v)
				unix.Lchown(v, int(Alice.UID), int(Alice.GID))
				ino := t.lstat(v).Ino
				got := do(t, x.u, v)
				if !matches(got, x.want) {
					t.Errorf("%s in a sticky directory as %s: %s, want %s", name, x.u.Name, got, x.want)
				}
				if x.want != "0" && t.lstat(v).Ino != ino {
					t.Errorf("%s refused, yet the entry changed", name)
				}
			}})
		}
	}
	return out
}

func matches(got, want string) bool {
	for _, w := range splitAlt(want) {
		if got == w {
			return true
		}
	}
	return false
}
