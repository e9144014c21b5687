package posixsuite

import (
	"golang.org/x/sys/unix"
)

// A pathOp describes how one system call uses a path, for the errors
// every path-taking call shares: ENOENT and ENOTDIR for the prefix,
// ENAMETOOLONG for a 256-byte name and a 4096-byte path, ELOOP, EACCES
// without search permission, and success at the limits (a 255-byte name,
// a 4095-byte path).
type pathOp struct {
	op string
	// args are the op's arguments with p as the path under test.
	args func(t *T, p string) []any
	// prepare makes what the op needs at p for success (nil for calls
	// that create p).
	prepare func(t *T, p string)
	// check asserts the effect of a success at p (may be nil).
	check func(t *T, p string)
}

func regularAt(t *T, p string) { t.file(p, 0o644, Root, "data") }
func dirAt(t *T, p string)     { t.mkdir(p, 0o755, Root) }

// pathCases are the shared path cases of po.
func pathCases(po pathOp) []tcase {
	fixture := func(t *T) {
		t.file(t.p("file"), 0o644, Root, "")
		t.ok("symlink", "loop2", t.p("loop1"))
		t.ok("symlink", "loop1", t.p("loop2"))
		t.mkdir(t.p("noexec"), 0o666, Root)
	}
	succeed := func(p string, t *T) {
		if po.prepare != nil {
			po.prepare(t, p)
		}
		t.expect("0", Root, po.op, po.args(t, p)...)
		if po.check != nil {
			po.check(t, p)
		}
	}
	return []tcase{
		{"path/ENOENT-prefix", func(t *T) { fixture(t); t.expect("ENOENT", Root, po.op, po.args(t, t.p("none", "x"))...) }},
		{"path/ENOTDIR-prefix", func(t *T) { fixture(t); t.expect("ENOTDIR", Root, po.op, po.args(t, t.p("file", "x"))...) }},
		{"path/ENAMETOOLONG-name", func(t *T) { fixture(t); t.expect("ENAMETOOLONG", Root, po.op, po.args(t, t.p(name256))...) }},
		{"path/ENAMETOOLONG-path", func(t *T) { fixture(t); t.expect("ENAMETOOLONG", Root, po.op, po.args(t, t.longPath(4096))...) }},
		{"path/ELOOP-prefix", func(t *T) { fixture(t); t.expect("ELOOP", Root, po.op, po.args(t, t.p("loop1", "x"))...) }},
		{"path/EACCES-search", func(t *T) {
			fixture(t)
			p := t.p("noexec", "x")
			if po.prepare != nil {
				unix.Chmod(t.p("noexec"), 0o755)
				po.prepare(t, p)
				unix.Chmod(t.p("noexec"), 0o666)
			}
			t.expect("EACCES", Alice, po.op, po.args(t, p)...)
		}},
		{"path/name-255", func(t *T) { fixture(t); succeed(t.p(name255), t) }},
		{"path/path-4095", func(t *T) { fixture(t); succeed(t.longPath(4095), t) }},
	}
}

// withPaths is cases followed by the shared path cases of po.
func withPaths(po pathOp, cases ...[]tcase) []tcase {
	var out []tcase
	for _, c := range cases {
		out = append(out, c...)
	}
	return append(out, pathCases(po)...)
}
