package posixsuite

import (
	"time"

	"golang.org/x/sys/unix"
)

func ts(sec, nsec int64) unix.Timespec { return unix.Timespec{Sec: sec, Nsec: nsec} }

var _ = register("utimensat", withPaths(
	pathOp{op: "utimensat", args: func(t *T, p string) []any { return []any{p, "1.1", "2.2", 0} }, prepare: regularAt,
		check: func(t *T, p string) {
			if a, m, _ := t.times(p); a != ts(1, 1) || m != ts(2, 2) {
				t.Errorf("times: %v %v", a, m)
			}
		}},
	forKinds(kindsBut("symlink"), "explicit-nanoseconds", func(t *T, k kind) {
		p := t.p("n")
		k.make(t, p)
		_, _, c := t.times(p)
		tick()
		for _, x := range [][2]unix.Timespec{
			{ts(1_000_000_000, 123_456_789), ts(1_200_000_000, 987_654_321)},
			{ts(0, 0), ts(1, 999_999_999)},
			{ts(1_500_000_000, 5), ts(1_000_000_000, 7)}, // mtime before atime
			{ts(4_102_444_800, 1), ts(4_102_444_801, 2)}, // 2100, past 2038
		} {
			t.ok("utimensat", p, tstr(x[0]), tstr(x[1]), 0)
			a, m, _ := t.times(p)
			if a != x[0] || m != x[1] {
				t.Errorf("times: %v %v, want %v %v", a, m, x[0], x[1])
			}
		}
		t.changed(p, c, "utimensat")
	}),
	[]tcase{
		{"UTIME_NOW", func(t *T) {
			p := t.file(t.p("f"), 0o644, Root, "")
			t.ok("utimensat", p, "1.0", "1.0", 0)
			before := now()
			t.ok("utimensat", p, "now", "now", 0)
			a, m, _ := t.times(p)
			if !notBefore(a, before) || !notBefore(m, before) {
				t.Errorf("UTIME_NOW: %v %v, before %v", a, m, before)
			}
		}},
		{"NULL-is-now", func(t *T) {
			p := t.file(t.p("f"), 0o644, Root, "")
			t.ok("utimensat", p, "1.0", "1.0", 0)
			before := now()
			t.ok("utimensat", p, "null", "", 0)
			a, m, _ := t.times(p)
			if !notBefore(a, before) || !notBefore(m, before) {
				t.Errorf("NULL times: %v %v, before %v", a, m, before)
			}
		}},
		{"UTIME_OMIT-both", func(t *T) {
			p := t.file(t.p("f"), 0o644, Root, "")
			t.ok("utimensat", p, "5.5", "6.6", 0)
			a, m, c := t.times(p)
			tick()
			t.ok("utimensat", p, "omit", "omit", 0)
			a2, m2, _ := t.times(p)
			if a2 != a || m2 != m {
				t.Errorf("UTIME_OMIT changed times")
			}
			t.unchanged(p, c, "UTIME_OMIT for both")
		}},
		{"UTIME_OMIT-mtime", func(t *T) {
			p := t.file(t.p("f"), 0o644, Root, "")
			t.ok("utimensat", p, "5.5", "6.6", 0)
			t.ok("utimensat", p, "7.7", "omit", 0)
			if a, m, _ := t.times(p); a != ts(7, 7) || m != ts(6, 6) {
				t.Errorf("times: %v %v", a, m)
			}
		}},
		{"UTIME_OMIT-atime", func(t *T) {
			p := t.file(t.p("f"), 0o644, Root, "")
			t.ok("utimensat", p, "5.5", "6.6", 0)
			t.ok("utimensat", p, "omit", "8.8", 0)
			if a, m, _ := t.times(p); a != ts(5, 5) || m != ts(8, 8) {
				t.Errorf("times: %v %v", a, m)
			}
		}},
		{"UTIME_NOW-mtime-only", func(t *T) {
			p := t.file(t.p("f"), 0o644, Root, "")
			t.ok("utimensat", p, "5.5", "6.6", 0)
			before := now()
			t.ok("utimensat", p, "omit", "now", 0)
			a, m, _ := t.times(p)
			if a != ts(5, 5) || !notBefore(m, before) {
				t.Errorf("times: %v %v", a, m)
			}
		}},
		{"AT_SYMLINK_NOFOLLOW", func(t *T) {
			p := t.file(t.p("f"), 0o644, Root, "")
			t.ok("utimensat", p, "5.5", "6.6", 0)
			t.ok("symlink", "f", t.p("l"))
			t.ok("utimensat", t.p("l"), "1.1", "2.2", unix.AT_SYMLINK_NOFOLLOW)
			if a, m, _ := t.times(t.p("l")); a != ts(1, 1) || m != ts(2, 2) {
				t.Errorf("symlink's times: %v %v", a, m)
			}
			if a, m, _ := t.times(p); a != ts(5, 5) || m != ts(6, 6) {
				t.Errorf("target's times: %v %v", a, m)
			}
			t.ok("utimensat", t.p("l"), "3.3", "4.4", 0)
			if a, m, _ := t.times(p); a != ts(3, 3) || m != ts(4, 4) {
				t.Errorf("followed: target's times %v %v", a, m)
			}
		}},
		{"EPERM-explicit-by-non-owner-with-write", func(t *T) {
			p := t.file(t.p("f"), 0o666, Alice, "")
			t.ok("utimensat", p, "5.5", "6.6", 0)
			t.expect("EPERM", Bob, "utimensat", p, "1.1", "2.2", 0)
			t.expect("EPERM", Bob, "utimensat", p, "1.1", "omit", 0)
			t.expect("EPERM", Bob, "utimensat", p, "now", "2.2", 0)
			if a, m, _ := t.times(p); a != ts(5, 5) || m != ts(6, 6) {
				t.Errorf("times after refusals: %v %v", a, m)
			}
		}},
		{"now-by-non-owner-with-write", func(t *T) {
			p := t.file(t.p("f"), 0o666, Alice, "")
			t.ok("utimensat", p, "5.5", "6.6", 0)
			t.expect("0", Bob, "utimensat", p, "now", "now", 0)
			t.expect("0", Bob, "utimensat", p, "null", "", 0)
			if _, m, _ := t.times(p); m == ts(6, 6) {
				t.Errorf("UTIME_NOW by a writer left mtime")
			}
		}},
		{"EACCES-now-by-non-owner-without-write", func(t *T) {
			p := t.file(t.p("f"), 0o644, Alice, "")
			t.expect("EACCES", Bob, "utimensat", p, "now", "now", 0)
			t.expect("EACCES", Bob, "utimensat", p, "null", "", 0)
		}},
		{"omit-both-by-non-owner", func(t *T) {
			p := t.file(t.p("f"), 0o644, Alice, "")
			t.expect("0", Bob, "utimensat", p, "omit", "omit", 0)
		}},
		{"owner-explicit-and-now-without-write", func(t *T) {
			p := t.file(t.p("f"), 0o444, Alice, "")
			t.expect("0", Alice, "utimensat", p, "1.1", "2.2", 0)
			t.expect("0", Alice, "utimensat", p, "now", "now", 0)
		}},
		{"group-writer-now", func(t *T) {
			p := t.file(t.p("f"), 0o464, User{UID: Alice.UID, GID: Bob.GID}, "")
			t.expect("0", Bob, "utimensat", p, "now", "now", 0)
			t.expect("EPERM", Bob, "utimensat", p, "1.0", "1.0", 0)
		}},
		{"root-explicit-on-foreign", func(t *T) {
			p := t.file(t.p("f"), 0o000, Alice, "")
			t.ok("utimensat", p, "9.9", "9.9", 0)
		}},
		{"EINVAL-nanoseconds", func(t *T) {
			p := t.file(t.p("f"), 0o644, Root, "")
			t.expect("EINVAL", Root, "utimensat", p, "1.1000000000", "1.0", 0)
			t.expect("EINVAL", Root, "utimensat", p, "1.0", "1.-1", 0)
		}},
		{"EINVAL-flags", func(t *T) {
			p := t.file(t.p("f"), 0o644, Root, "")
			t.expect("EINVAL", Root, "utimensat", p, "1.0", "1.0", 0x4000)
		}},
		{"ENOENT", func(t *T) { t.expect("ENOENT", Root, "utimensat", t.p("none"), "1.0", "1.0", 0) }},
	},
))

func tstr(x unix.Timespec) string { return itoa(int(x.Sec)) + "." + itoa(int(x.Nsec)) }

func now() unix.Timespec {
	// File systems stamp with the kernel's coarse clock, which may lag
	// the fine one by a tick: allow 20 ms.
	return unix.NsecToTimespec(time.Now().Add(-20 * time.Millisecond).UnixNano())
}

func notBefore(a, b unix.Timespec) bool { return !after(b, a) }
