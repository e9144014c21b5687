package posixsuite

import "golang.org/x/sys/unix"

var _ = register("chmod", withPaths(
	pathOp{op: "chmod", args: func(t *T, p string) []any { return []any{p, uint32(0o600)} }, prepare: regularAt,
		check: func(t *T, p string) { t.mode(p, unix.S_IFREG|0o600) }},
	forKinds(kindsBut("symlink"), "changes-mode", func(t *T, k kind) {
		p := t.p("n")
		k.make(t, p)
		_, _, c := t.times(p)
		tick()
		for _, m := range []uint32{0o111, 0o7777 &^ 0o1000, 0o1777, 0o4000, 0o2000, 0} {
			t.ok("chmod", p, m)
			t.mode(p, k.ifmt|m)
		}
		t.changed(p, c, "chmod")
	}),
	forKinds(kindsBut("symlink"), "through-symlink", func(t *T, k kind) {
		p := t.p("n")
		k.make(t, p)
		t.ok("symlink", "n", t.p("l"))
		t.ok("chmod", t.p("l"), uint32(0o640))
		t.mode(p, k.ifmt|0o640)
		t.mode(t.p("l"), unix.S_IFLNK|0o777)
	}),
	forKinds(kindsBut("symlink", "blockdev", "chardev"), "owner-may", func(t *T, k kind) {
		p := t.p("n")
		k.make(t, p)
		t.own(p, 0o644, Alice)
		t.expect("0", Alice, "chmod", p, uint32(0o604))
		t.mode(p, k.ifmt|0o604)
	}),
	forKinds(kindsBut("symlink", "blockdev", "chardev"), "EPERM-not-owner", func(t *T, k kind) {
		p := t.p("n")
		k.make(t, p)
		t.own(p, 0o666, Alice)
		_, _, c := t.times(p)
		tick()
		t.expect("EPERM", Bob, "chmod", p, uint32(0o777))
		t.mode(p, k.ifmt|0o666)
		t.unchanged(p, c, "a refused chmod")
	}),
	[]tcase{
		{"EPERM-group-member-not-owner", func(t *T) {
			p := t.file(t.p("f"), 0o664, User{UID: Alice.UID, GID: Bob.GID}, "")
			t.expect("EPERM", Bob, "chmod", p, uint32(0o666))
		}},
		{"root-not-owner", func(t *T) {
			p := t.file(t.p("f"), 0o600, Alice, "")
			t.ok("chmod", p, uint32(0o4755))
			t.mode(p, unix.S_IFREG|0o4755)
		}},
		{"sgid-dropped-when-not-in-group", func(t *T) {
			p := t.file(t.p("f"), 0o644, User{UID: Alice.UID, GID: Bob.GID}, "")
			t.expect("0", Alice, "chmod", p, uint32(0o2755))
			t.mode(p, unix.S_IFREG|0o755)
		}},
		{"sgid-kept-for-supplementary-group", func(t *T) {
			p := t.file(t.p("f"), 0o644, User{UID: Alice.UID, GID: Bob.GID}, "")
			t.expect("0", Alice2, "chmod", p, uint32(0o2755))
			t.mode(p, unix.S_IFREG|0o2755)
		}},
		{"sgid-kept-for-primary-group", func(t *T) {
			p := t.file(t.p("f"), 0o644, Alice, "")
			t.expect("0", Alice, "chmod", p, uint32(0o2755))
			t.mode(p, unix.S_IFREG|0o2755)
		}},
		{"sgid-dir-dropped-when-not-in-group", func(t *T) {
			p := t.mkdir(t.p("d"), 0o755, User{UID: Alice.UID, GID: Bob.GID})
			t.expect("0", Alice, "chmod", p, uint32(0o2755))
			t.mode(p, unix.S_IFDIR|0o755)
		}},
		{"sticky-file-by-owner", func(t *T) {
			// Linux lets anyone set the sticky bit on a file (BSD says EFTYPE).
			p := t.file(t.p("f"), 0o644, Alice, "")
			t.expect("0", Alice, "chmod", p, uint32(0o1644))
			t.mode(p, unix.S_IFREG|0o1644)
		}},
		{"suid-by-owner", func(t *T) {
			p := t.file(t.p("f"), 0o644, Alice, "")
			t.expect("0", Alice, "chmod", p, uint32(0o4755))
			t.mode(p, unix.S_IFREG|0o4755)
		}},
		{"ignores-type-bits", func(t *T) {
			p := t.file(t.p("f"), 0o644, Root, "")
			t.ok("chmod", p, uint32(unix.S_IFDIR|0o700))
			t.mode(p, unix.S_IFREG|0o700)
		}},
		{"fchmod", func(t *T) {
			p := t.file(t.p("f"), 0o644, Alice, "")
			t.expect("0", Alice, "fchmod", p, unix.O_RDONLY, uint32(0o600))
			t.mode(p, unix.S_IFREG|0o600)
		}},
		{"fchmod-EPERM-not-owner", func(t *T) {
			p := t.file(t.p("f"), 0o666, Alice, "")
			t.expect("EPERM", Bob, "fchmod", p, unix.O_RDWR, uint32(0o600))
			t.mode(p, unix.S_IFREG|0o666)
		}},
		{"ENOENT", func(t *T) { t.expect("ENOENT", Root, "chmod", t.p("none"), uint32(0o644)) }},
		{"ENOENT-dangling-symlink", func(t *T) {
			t.ok("symlink", "none", t.p("l"))
			t.expect("ENOENT", Root, "chmod", t.p("l"), uint32(0o644))
		}},
	},
))
