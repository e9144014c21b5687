package posixsuite

import "golang.org/x/sys/unix"

// granular: pjdfstest's granular tests exercise NFSv4 ACLs (FreeBSD) and
// are skipped on Linux; here they are the mode-bit checks on directories
// that the same operations depend on — search, read and write bits, by
// class (owner, group by primary or supplementary id, other) — plus the
// rule that root passes them all.
var _ = register("granular", dirMatrix())

// class is a user in one permission class of a file that Alice owns
// and Bob's group holds: shift places the class's bits in the mode.
type class struct {
	name  string
	u     User
	shift uint
}

// classes are the four ways to be in a class: owner, group by primary
// and by supplementary id, other.
var classes = []class{
	{"owner", Alice, 6},
	{"group", Bob, 3},
	{"suppl-group", User{Name: "other+bobs", UID: 65530, GID: 65530, Groups: []uint32{Bob.GID}}, 3},
	{"other", User{Name: "other", UID: 65530, GID: 65530}, 0},
}

func dirMatrix() []tcase {
	type access struct {
		name string
		need uint32 // r=4 w=2 x=1
		do   func(t *T, u User, d string) string
	}
	accs := []access{
		{"stat-child", 1, func(t *T, u User, d string) string { return t.do(u, "stat", d+"/f") }},
		{"readdir", 4, func(t *T, u User, d string) string { return t.do(u, "readdir", d) }},
		{"create", 3, func(t *T, u User, d string) string { return t.do(u, "open", d+"/new", creat, uint32(0o644)) }},
		{"unlink", 3, func(t *T, u User, d string) string { return t.do(u, "unlink", d+"/f") }},
		{"mkdir", 3, func(t *T, u User, d string) string { return t.do(u, "mkdir", d+"/new", uint32(0o755)) }},
		{"rename-within", 3, func(t *T, u User, d string) string { return t.do(u, "rename", d+"/f", d+"/g") }},
	}
	var out []tcase
	for _, w := range classes {
		for _, bits := range []uint32{0, 1, 3, 5, 6, 7} {
			for _, a := range accs {
				out = append(out, tcase{w.name + "-" + octal(bits) + "-" + a.name, granularRun(w.u, w.shift, bits, a.need, a.do)})
			}
		}
	}
	return append(out,
		tcase{"root-ignores-mode-bits", func(t *T) {
			d := t.mkdir(t.p("d"), 0o000, Alice)
			t.file(t.p("d", "f"), 0o000, Alice, "x")
			t.ok("readdir", d)
			t.ok("stat", t.p("d", "f"))
			t.ok("write", t.p("d", "f"), unix.O_RDWR, "y")
			t.ok("open", t.p("d", "g"), creat, uint32(0o644))
			t.ok("unlink", t.p("d", "g"))
		}},
		tcase{"file-access-needs-every-prefix-searchable", func(t *T) {
			t.mkdir(t.p("a"), 0o777, Root)
			t.mkdir(t.p("a", "b"), 0o766, Root)
			t.mkdir(t.p("a", "b", "c"), 0o777, Root)
			t.file(t.p("a", "b", "c", "f"), 0o666, Root, "")
			t.expect("EACCES", Alice, "open", t.p("a", "b", "c", "f"), unix.O_RDONLY, 0)
			t.ok("chmod", t.p("a", "b"), uint32(0o711))
			t.expect("0", Alice, "open", t.p("a", "b", "c", "f"), unix.O_RDWR, 0)
			t.expect("EACCES", Alice, "readdir", t.p("a", "b"))
		}},
		tcase{"permission-rechecked-after-chmod", func(t *T) {
			t.file(t.p("f"), 0o644, Alice, "")
			t.expect("EACCES", Bob, "open", t.p("f"), unix.O_WRONLY, 0)
			t.ok("chmod", t.p("f"), uint32(0o646))
			t.expect("0", Bob, "open", t.p("f"), unix.O_WRONLY, 0)
			t.ok("chown", t.p("f"), Bob.UID, Bob.GID)
			t.ok("chmod", t.p("f"), uint32(0o046))
			t.expect("EACCES", Bob, "open", t.p("f"), unix.O_WRONLY, 0)
		}},
	)
}

// granularRun checks that u, whose class in the directory's mode is at
// shift, may do the access exactly when bits hold need.
func granularRun(u User, shift uint, bits, need uint32, do func(t *T, u User, d string) string) func(t *T) {
	return func(t *T) {
		mode := bits<<shift | 0o777&^(0o7<<shift)
		d := t.mkdir(t.p("d"), 0o755, Root)
		t.file(t.p("d", "f"), 0o666, Root, "")
		t.own(d, mode, User{UID: Alice.UID, GID: Bob.GID})
		want := "EACCES"
		if bits&need == need {
			want = "0"
		}
		if got := do(t, u, d); got != want {
			t.Errorf("as %s in a directory of mode %#o: %s, want %s", u.Name, mode, got, want)
		}
	}
}
