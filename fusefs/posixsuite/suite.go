package posixsuite

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A User is who performs an op: root in the test process, anyone else in
// a child process started with these credentials.
type User struct {
	Name   string
	UID    uint32
	GID    uint32
	Groups []uint32
}

// The users of the suite. Alice and bob have primary groups of their own;
// alice2 is alice with bob's group as a supplementary group.
var (
	Root   = User{Name: "root"}
	Alice  = User{Name: "alice", UID: 65534, GID: 65532}
	Bob    = User{Name: "bob", UID: 65533, GID: 65531}
	Alice2 = User{Name: "alice+bobs", UID: 65534, GID: 65532, Groups: []uint32{65531}}
)

// A family is the cases of one system call (or a close group of them).
type family struct {
	name  string
	cases []tcase
}

// A tcase is one case: run sets up its fixture in t.dir and asserts.
type tcase struct {
	name string
	run  func(t *T)
}

// families are every family of the suite, in the order they run.
var families []family

func register(name string, cases []tcase) bool {
	families = append(families, family{name, cases})
	return true
}

// Run runs the whole suite in dir, which must be an empty directory of
// the file system under test, writable by root. It needs to run as root
// (it becomes other users to check permissions) and leaves dir empty.
// The test binary's TestMain must call ServeChild first.
func Run(t *testing.T, dir string) {
	if os.Geteuid() != 0 {
		t.Fatal("posixsuite: the suite runs as root")
	}
	old := unix.Umask(0)
	defer unix.Umask(old)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := childBinary(t)
	nf, nc := Count()
	t.Logf("posixsuite: %d families, %d cases in %s", nf, nc, dir)
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			fdir := filepath.Join(dir, f.name)
			if err := os.Mkdir(fdir, 0o755); err != nil {
				t.Fatal(err)
			}
			for i, c := range f.cases {
				t.Run(c.name, func(t *testing.T) {
					d := filepath.Join(fdir, fmt.Sprint(i))
					if err := os.Mkdir(d, 0o755); err != nil {
						t.Fatal(err)
					}
					c.run(&T{T: t, dir: d, exe: exe})
					unix.Umask(0)
					if err := os.RemoveAll(d); err != nil {
						t.Errorf("clean up: %v", err)
					}
				})
			}
			if err := os.Remove(fdir); err != nil {
				t.Errorf("clean up: %v", err)
			}
		})
	}
}

// OpenParents makes dir's parents up to the temporary directory
// searchable by the suite's users: t.TempDir makes them 0700.
func OpenParents(t testing.TB, dir string) {
	t.Helper()
	for d := filepath.Dir(dir); d != os.TempDir() && d != "/" && d != "."; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// Count reports the number of families and of cases.
func Count() (nfamilies, ncases int) {
	for _, f := range families {
		ncases += len(f.cases)
	}
	return len(families), ncases
}

var (
	exeOnce sync.Once
	exePath string
	exeErr  error
)

// childBinary is a copy of the test binary that any user can execute:
// go test builds it under a directory only its owner may search.
func childBinary(t *testing.T) string {
	exeOnce.Do(func() {
		self, err := os.Executable()
		if err != nil {
			exeErr = err
			return
		}
		dir, err := os.MkdirTemp("", "posixsuite-")
		if err != nil {
			exeErr = err
			return
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			exeErr = err
			return
		}
		exePath = filepath.Join(dir, "child")
		in, err := os.Open(self)
		if err != nil {
			exeErr = err
			return
		}
		defer in.Close()
		out, err := os.OpenFile(exePath, os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			exeErr = err
			return
		}
		if _, err := io.Copy(out, in); err != nil {
			exeErr = err
		}
		if err := out.Close(); err != nil && exeErr == nil {
			exeErr = err
		}
	})
	if exeErr != nil {
		t.Fatalf("posixsuite: copy the test binary: %v", exeErr)
	}
	return exePath
}

// Cleanup removes the copy of the test binary; TestMain calls it after
// the tests.
func Cleanup() {
	if exePath != "" {
		os.RemoveAll(filepath.Dir(exePath))
	}
}

// T is one case's view: its own directory and the helpers to act and
// assert.
type T struct {
	*testing.T
	dir   string
	exe   string
	umask int
}

// p is a path in the case's directory.
func (t *T) p(names ...string) string {
	return filepath.Join(append([]string{t.dir}, names...)...)
}

// do runs op as u and returns the errno's name ("0" for success).
func (t *T) do(u User, name string, args ...any) string {
	t.Helper()
	sargs := make([]string, len(args))
	for i, a := range args {
		switch a := a.(type) {
		case string:
			sargs[i] = a
		case uint32:
			sargs[i] = fmt.Sprintf("%#o", a)
		default:
			sargs[i] = fmt.Sprint(a)
		}
	}
	if u.UID == 0 && u.GID == 0 && len(u.Groups) == 0 {
		old := unix.Umask(t.umask)
		defer unix.Umask(old)
		return errnoName(ops[name](sargs))
	}
	cmd := exec.Command(t.exe, append([]string{name}, sargs...)...)
	// A race-built binary otherwise sleeps a second at exit.
	cmd.Env = []string{childEnv + "=" + fmt.Sprint(t.umask), "GORACE=atexit_sleep_ms=0"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: u.Groups}}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s as %s: %v\n%s", name, u.Name, err, errb.String())
	}
	return out.String()
}

// expect runs op as u and requires the result want: "0", an errno name,
// or alternatives separated by "|" where POSIX allows either.
func (t *T) expect(want string, u User, name string, args ...any) {
	t.Helper()
	got := t.do(u, name, args...)
	for _, w := range strings.Split(want, "|") {
		if got == w {
			return
		}
	}
	t.Errorf("%s %v as %s: %s, want %s", name, args, u.Name, got, want)
}

// ok runs op as root and requires success.
func (t *T) ok(name string, args ...any) {
	t.Helper()
	t.expect("0", Root, name, args...)
}

// lstat returns path's attributes (not following a final symlink).
func (t *T) lstat(path string) unix.Stat_t {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatalf("lstat %s: %v", path, err)
	}
	return st
}

// mode requires path's mode (type bits included) to be want.
func (t *T) mode(path string, want uint32) {
	t.Helper()
	if got := t.lstat(path).Mode; got != want {
		t.Errorf("mode of %s: %#o, want %#o", path, got, want)
	}
}

// owner requires path's owner and group.
func (t *T) owner(path string, uid, gid uint32) {
	t.Helper()
	st := t.lstat(path)
	if st.Uid != uid || st.Gid != gid {
		t.Errorf("owner of %s: %d:%d, want %d:%d", path, st.Uid, st.Gid, uid, gid)
	}
}

// size requires path's size.
func (t *T) size(path string, want int64) {
	t.Helper()
	if got := t.lstat(path).Size; got != want {
		t.Errorf("size of %s: %d, want %d", path, got, want)
	}
}

// nlink requires path's link count.
func (t *T) nlink(path string, want uint64) {
	t.Helper()
	if got := uint64(t.lstat(path).Nlink); got != want {
		t.Errorf("nlink of %s: %d, want %d", path, got, want)
	}
}

// gone requires that path does not exist.
func (t *T) gone(path string) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != unix.ENOENT {
		t.Errorf("lstat %s: %v, want ENOENT", path, err)
	}
}

// content requires path's bytes.
func (t *T) content(path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Errorf("read %s: %q, %v; want %q", path, got, err, want)
	}
}

// file makes a regular file as root with mode and owner u, holding data.
func (t *T) file(path string, mode uint32, u User, data string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	t.own(path, mode, u)
	return path
}

// mkdir makes a directory as root with mode and owner u.
func (t *T) mkdir(path string, mode uint32, u User) string {
	t.Helper()
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	t.own(path, mode, u)
	return path
}

// own sets path's owner and then its mode (chown may clear set-id bits).
func (t *T) own(path string, mode uint32, u User) {
	t.Helper()
	if err := unix.Lchown(path, int(u.UID), int(u.GID)); err != nil {
		t.Fatal(err)
	}
	if err := unix.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// times returns path's access, modification and change times.
func (t *T) times(path string) (atime, mtime, ctime unix.Timespec) {
	t.Helper()
	st := t.lstat(path)
	return st.Atim, st.Mtim, st.Ctim
}

// tick waits long enough that a new timestamp differs from any taken
// before: file systems stamp with a clock that may be coarse.
func tick() { time.Sleep(15 * time.Millisecond) }

func after(a, b unix.Timespec) bool { return a.Sec > b.Sec || a.Sec == b.Sec && a.Nsec > b.Nsec }

// changed requires path's ctime to be later than before; unchanged that
// it is equal.
func (t *T) changed(path string, before unix.Timespec, what string) {
	t.Helper()
	if _, _, c := t.times(path); !after(c, before) {
		t.Errorf("%s: ctime of %s did not advance (%v, before %v)", what, path, c, before)
	}
}

func (t *T) unchanged(path string, before unix.Timespec, what string) {
	t.Helper()
	if _, _, c := t.times(path); c != before {
		t.Errorf("%s: ctime of %s changed (%v, before %v)", what, path, c, before)
	}
}

// kind is one type of file a case may make: regular, dir, fifo, socket,
// symlink, and root-only block/char devices.
type kind struct {
	name string
	make func(t *T, path string)
	ifmt uint32
}

var kinds = []kind{
	{"regular", func(t *T, p string) { t.ok("open", p, unix.O_CREAT|unix.O_WRONLY|unix.O_EXCL, uint32(0o644)) }, unix.S_IFREG},
	{"dir", func(t *T, p string) { t.ok("mkdir", p, uint32(0o755)) }, unix.S_IFDIR},
	{"fifo", func(t *T, p string) { t.ok("mkfifo", p, uint32(0o644)) }, unix.S_IFIFO},
	{"socket", func(t *T, p string) { t.ok("bind", p) }, unix.S_IFSOCK},
	{"symlink", func(t *T, p string) { t.ok("symlink", "target", p) }, unix.S_IFLNK},
	{"blockdev", func(t *T, p string) { t.ok("mknod", p, uint32(unix.S_IFBLK|0o644), unix.Mkdev(1, 2)) }, unix.S_IFBLK},
	{"chardev", func(t *T, p string) { t.ok("mknod", p, uint32(unix.S_IFCHR|0o644), unix.Mkdev(1, 3)) }, unix.S_IFCHR},
}

// kindsBut is kinds without the named ones.
func kindsBut(names ...string) []kind {
	var out []kind
next:
	for _, k := range kinds {
		for _, n := range names {
			if k.name == n {
				continue next
			}
		}
		out = append(out, k)
	}
	return out
}

// forKinds makes one case per kind from f.
func forKinds(ks []kind, prefix string, f func(t *T, k kind)) []tcase {
	var out []tcase
	for _, k := range ks {
		out = append(out, tcase{prefix + "/" + k.name, func(t *T) { f(t, k) }})
	}
	return out
}

// name255 and name256 are file names of NAME_MAX and NAME_MAX+1 bytes.
var (
	name255 = strings.Repeat("x", 255)
	name256 = strings.Repeat("x", 256)
)

// longPath returns a path of exactly n bytes under the case's directory,
// made of existing directories (made as root) plus a final component that
// does not exist, so that only its length can make an op fail.
func (t *T) longPath(n int) string {
	t.Helper()
	p := t.dir
	for rest := n - len(p) - 1; rest > 255; rest = n - len(p) - 1 {
		l := 255
		if rest-256 < 1 {
			l = 200
		}
		p = filepath.Join(p, strings.Repeat("d", l))
		if err := os.Mkdir(p, 0o755); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
	}
	p += "/" + strings.Repeat("y", n-len(p)-1)
	if len(p) != n {
		t.Fatalf("posixsuite: a path of %d bytes, not %d", len(p), n)
	}
	return p
}

func splitAlt(want string) []string { return strings.Split(want, "|") }

// statErr is lstat's error alone.
func statErr(path string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Lstat(path, &st)
	return st, err
}

func itoa(n int) string { return fmt.Sprint(n) }
