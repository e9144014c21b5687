package posixsuite

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// An op is one system call (or a short fixed sequence, such as open then
// ftruncate) that a case performs as some user. Its arguments are strings
// so the same op runs in this process (as root) and in a child process
// started with another user's credentials.
type op func(args []string) error

// ops are the operations cases may run, by name.
var ops = map[string]op{
	"open": func(a []string) error {
		fd, err := unix.Open(a[0], int(num(a, 1)), uint32(num(a, 2)))
		if err != nil {
			return err
		}
		return unix.Close(fd)
	},
	"mkdir":  func(a []string) error { return unix.Mkdir(a[0], uint32(num(a, 1))) },
	"rmdir":  func(a []string) error { return unix.Rmdir(a[0]) },
	"unlink": func(a []string) error { return unix.Unlink(a[0]) },
	"rename": func(a []string) error { return unix.Rename(a[0], a[1]) },
	"renameat2": func(a []string) error {
		return unix.Renameat2(unix.AT_FDCWD, a[0], unix.AT_FDCWD, a[1], uint(num(a, 2)))
	},
	"link":     func(a []string) error { return unix.Link(a[0], a[1]) },
	"symlink":  func(a []string) error { return unix.Symlink(a[0], a[1]) },
	"readlink": func(a []string) error { _, err := unix.Readlink(a[0], make([]byte, 8192)); return err },
	"chmod":    func(a []string) error { return unix.Chmod(a[0], uint32(num(a, 1))) },
	"chown":    func(a []string) error { return unix.Chown(a[0], int(num(a, 1)), int(num(a, 2))) },
	"lchown":   func(a []string) error { return unix.Lchown(a[0], int(num(a, 1)), int(num(a, 2))) },
	"truncate": func(a []string) error { return unix.Truncate(a[0], num(a, 1)) },
	"stat":     func(a []string) error { var st unix.Stat_t; return unix.Stat(a[0], &st) },
	"lstat":    func(a []string) error { var st unix.Stat_t; return unix.Lstat(a[0], &st) },
	"mknod":    func(a []string) error { return unix.Mknod(a[0], uint32(num(a, 1)), int(num(a, 2))) },
	"mkfifo":   func(a []string) error { return unix.Mkfifo(a[0], uint32(num(a, 1))) },
	// ftruncate PATH FLAGS SIZE opens PATH with FLAGS, then truncates the
	// descriptor.
	"ftruncate": func(a []string) error {
		return withFD(a[0], int(num(a, 1)), func(fd int) error { return unix.Ftruncate(fd, num(a, 2)) })
	},
	// fallocate PATH FLAGS MODE OFFSET LEN.
	"fallocate": func(a []string) error {
		return withFD(a[0], int(num(a, 1)), func(fd int) error {
			return unix.Fallocate(fd, uint32(num(a, 2)), num(a, 3), num(a, 4))
		})
	},
	// write PATH FLAGS DATA opens PATH with FLAGS and writes DATA.
	"write": func(a []string) error {
		return withFD(a[0], int(num(a, 1)), func(fd int) error {
			_, err := unix.Write(fd, []byte(a[2]))
			return err
		})
	},
	"read": func(a []string) error {
		return withFD(a[0], unix.O_RDONLY, func(fd int) error {
			_, err := unix.Read(fd, make([]byte, 64))
			return err
		})
	},
	"readdir": func(a []string) error {
		return withFD(a[0], unix.O_RDONLY|unix.O_DIRECTORY, func(fd int) error {
			_, err := unix.Getdents(fd, make([]byte, 4096))
			return err
		})
	},
	// fchmod and fchown PATH FLAGS ... act on a descriptor opened with FLAGS.
	"fchmod": func(a []string) error {
		return withFD(a[0], int(num(a, 1)), func(fd int) error { return unix.Fchmod(fd, uint32(num(a, 2))) })
	},
	"fchown": func(a []string) error {
		return withFD(a[0], int(num(a, 1)), func(fd int) error { return unix.Fchown(fd, int(num(a, 2)), int(num(a, 3))) })
	},
	// utimensat PATH ATIME MTIME FLAGS; a time is SEC.NSEC, "now" or
	// "omit"; ATIME "null" passes a NULL times pointer.
	"utimensat": func(a []string) error {
		flags := num(a, 3)
		var p unsafe.Pointer
		var ts [2]unix.Timespec
		if a[1] != "null" {
			ts[0], ts[1] = timespec(a[1]), timespec(a[2])
			p = unsafe.Pointer(&ts[0])
		}
		name, err := unix.BytePtrFromString(a[0])
		if err != nil {
			return err
		}
		fd := unix.AT_FDCWD
		_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(fd), uintptr(unsafe.Pointer(name)), uintptr(p), uintptr(flags), 0, 0)
		if e != 0 {
			return e
		}
		return nil
	},
	// bind PATH makes a Unix domain socket there.
	"bind": func(a []string) error {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Bind(fd, &unix.SockaddrUnix{Name: a[0]})
	},
}

func withFD(path string, flags int, f func(fd int) error) error {
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	err = f(fd)
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	return err
}

// num parses a[i] as an integer in Go syntax (0o755, 0x10, -1).
func num(a []string, i int) int64 {
	n, err := strconv.ParseInt(a[i], 0, 64)
	if err != nil {
		panic(fmt.Sprintf("posixsuite: argument %d %q: %v", i, a[i], err))
	}
	return n
}

func timespec(s string) unix.Timespec {
	switch s {
	case "now":
		return unix.Timespec{Nsec: unix.UTIME_NOW}
	case "omit":
		return unix.Timespec{Nsec: unix.UTIME_OMIT}
	}
	var sec, nsec int64
	if _, err := fmt.Sscanf(s, "%d.%d", &sec, &nsec); err != nil {
		panic(fmt.Sprintf("posixsuite: time %q: %v", s, err))
	}
	return unix.Timespec{Sec: sec, Nsec: nsec}
}

// errnoName is "0" for nil and the errno's name (EACCES) otherwise.
func errnoName(err error) string {
	if err == nil {
		return "0"
	}
	var e syscall.Errno
	if en, ok := err.(syscall.Errno); ok {
		e = en
	} else {
		return "ERR(" + err.Error() + ")"
	}
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return "errno" + strconv.Itoa(int(e))
}

// childEnv marks a process started to run one op as another user.
const childEnv = "FORKSPACE_POSIXSUITE_OP"

// ServeChild runs the op a parent asked for and exits, if this process is
// such a child; otherwise it returns at once. A test binary that runs the
// suite calls it first thing in TestMain.
func ServeChild() {
	if os.Getenv(childEnv) == "" {
		return
	}
	args := os.Args[1:]
	f, ok := ops[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "posixsuite: no op %q\n", args[0])
		os.Exit(2)
	}
	unix.Umask(int(num([]string{os.Getenv(childEnv)}, 0)))
	fmt.Print(errnoName(f(args[1:])))
	os.Exit(0)
}
