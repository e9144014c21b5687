package posixsuite

import "golang.org/x/sys/unix"

var _ = register("chown", withPaths(
	pathOp{op: "chown", args: func(t *T, p string) []any { return []any{p, 65534, 65532} }, prepare: regularAt,
		check: func(t *T, p string) { t.owner(p, 65534, 65532) }},
	forKinds(kindsBut("symlink"), "root-changes-owner", func(t *T, k kind) {
		p := t.p("n")
		k.make(t, p)
		_, _, c := t.times(p)
		tick()
		t.ok("chown", p, 65534, 65533)
		t.owner(p, 65534, 65533)
		t.changed(p, c, "chown")
		t.ok("chown", p, -1, 65531)
		t.owner(p, 65534, 65531)
		t.ok("chown", p, 65533, -1)
		t.owner(p, 65533, 65531)
		t.ok("chown", p, -1, -1)
		t.owner(p, 65533, 65531)
	}),
	forKinds(kindsBut("symlink"), "follows-symlink", func(t *T, k kind) {
		p := t.p("n")
		k.make(t, p)
		t.ok("symlink", "n", t.p("l"))
		t.ok("chown", t.p("l"), 65534, 65532)
		t.owner(p, 65534, 65532)
		t.owner(t.p("l"), 0, 0)
	}),
	forKinds(kindsBut("symlink"), "lchown-symlink-only", func(t *T, k kind) {
		p := t.p("n")
		k.make(t, p)
		t.ok("symlink", "n", t.p("l"))
		t.ok("lchown", t.p("l"), 65534, 65532)
		t.owner(t.p("l"), 65534, 65532)
		t.owner(p, 0, 0)
	}),
	forKinds(kindsBut("symlink", "blockdev", "chardev"), "EPERM-other-uid", func(t *T, k kind) {
		p := t.p("n")
		k.make(t, p)
		t.own(p, 0o644, Alice)
		t.expect("EPERM", Alice, "chown", p, Bob.UID, Alice.GID)
		t.expect("EPERM", Bob, "chown", p, Bob.UID, Bob.GID)
		t.owner(p, Alice.UID, Alice.GID)
	}),
	[]tcase{
		{"owner-to-own-group", func(t *T) {
			p := t.file(t.p("f"), 0o644, User{UID: Alice.UID, GID: Bob.GID}, "")
			t.expect("0", Alice, "chown", p, -1, Alice.GID)
			t.owner(p, Alice.UID, Alice.GID)
		}},
		{"owner-to-supplementary-group", func(t *T) {
			p := t.file(t.p("f"), 0o644, Alice, "")
			t.expect("0", Alice2, "chown", p, Alice.UID, Bob.GID)
			t.owner(p, Alice.UID, Bob.GID)
		}},
		{"EPERM-owner-to-foreign-group", func(t *T) {
			p := t.file(t.p("f"), 0o644, Alice, "")
			t.expect("EPERM", Alice, "chown", p, -1, Bob.GID)
			t.owner(p, Alice.UID, Alice.GID)
		}},
		{"EPERM-non-owner-same-ids", func(t *T) {
			p := t.file(t.p("f"), 0o666, Alice, "")
			t.expect("EPERM", Bob, "chown", p, Alice.UID, Alice.GID)
		}},
		{"non-owner-minus-one", func(t *T) {
			// Neither id changes, so no ownership rule applies.
			p := t.file(t.p("f"), 0o644, Alice, "")
			t.expect("0", Bob, "chown", p, -1, -1)
			t.owner(p, Alice.UID, Alice.GID)
		}},
		{"owner-minus-one-clears-setid", func(t *T) {
			// Linux clears the set-id bits of a file on every chown that
			// succeeds, even one that changes neither id.
			p := t.file(t.p("f"), 0o6555, Alice, "")
			t.expect("0", Alice, "chown", p, -1, -1)
			t.mode(p, unix.S_IFREG|0o555)
		}},
		{"root-minus-one-clears-setid", func(t *T) {
			p := t.file(t.p("f"), 0o6555, Alice, "")
			t.ok("chown", p, -1, -1)
			t.mode(p, unix.S_IFREG|0o555)
		}},
		{"minus-one-keeps-dir-setgid", func(t *T) {
			p := t.mkdir(t.p("d"), 0o2755, Alice)
			t.expect("0", Alice, "chown", p, -1, -1)
			t.mode(p, unix.S_IFDIR|0o2755)
		}},
		{"owner-clears-suid-sgid", func(t *T) {
			p := t.file(t.p("f"), 0o6555, Alice, "")
			t.expect("0", Alice2, "chown", p, -1, Bob.GID)
			t.mode(p, unix.S_IFREG|0o555)
			t.owner(p, Alice.UID, Bob.GID)
		}},
		{"owner-same-ids-clears-suid-sgid", func(t *T) {
			p := t.file(t.p("f"), 0o6555, Alice, "")
			t.expect("0", Alice, "chown", p, Alice.UID, Alice.GID)
			t.mode(p, unix.S_IFREG|0o555)
		}},
		{"sgid-without-group-exec-kept", func(t *T) {
			// Without group execute, S_ISGID marks mandatory locking, not
			// set-group-ID: chown leaves it.
			p := t.file(t.p("f"), 0o6745, Alice, "")
			t.expect("0", Alice, "chown", p, Alice.UID, Alice.GID)
			t.mode(p, unix.S_IFREG|0o2745)
		}},
		{"root-clears-suid-sgid-on-file", func(t *T) {
			p := t.file(t.p("f"), 0o6755, Root, "")
			t.ok("chown", p, 65534, 65532)
			t.mode(p, unix.S_IFREG|0o755)
		}},
		{"root-keeps-dir-sgid", func(t *T) {
			p := t.mkdir(t.p("d"), 0o2755, Root)
			t.ok("chown", p, 65534, 65532)
			t.mode(p, unix.S_IFDIR|0o2755)
		}},
		{"fchown", func(t *T) {
			p := t.file(t.p("f"), 0o644, Alice, "")
			t.expect("0", Alice2, "fchown", p, unix.O_RDONLY, -1, Bob.GID)
			t.owner(p, Alice.UID, Bob.GID)
			t.expect("EPERM", Bob, "fchown", p, unix.O_RDONLY, Bob.UID, -1)
		}},
		{"ctime-unchanged-on-EPERM", func(t *T) {
			p := t.file(t.p("f"), 0o644, Alice, "")
			_, _, c := t.times(p)
			tick()
			t.expect("EPERM", Bob, "chown", p, Bob.UID, Bob.GID)
			t.unchanged(p, c, "refused chown")
		}},
		{"owner-ctime", func(t *T) {
			p := t.file(t.p("f"), 0o644, Alice, "")
			_, _, c := t.times(p)
			tick()
			t.expect("0", Alice2, "chown", p, -1, Bob.GID)
			t.changed(p, c, "chown by owner")
		}},
		{"ENOENT", func(t *T) { t.expect("ENOENT", Root, "chown", t.p("none"), 1, 1) }},
		{"lchown-ENOENT", func(t *T) { t.expect("ENOENT", Root, "lchown", t.p("none"), 1, 1) }},
	},
))
