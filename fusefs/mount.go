package fusefs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/vfs"
)

// Options configure a mount. The zero value means defaults.
type Options struct {
	// ReadOnly refuses every mutation with EROFS (the kernel's "ro"). A
	// snapshot FS (a checkpoint) is always mounted read-only.
	ReadOnly bool
	// AllowOther lets users other than the one who mounted reach the
	// mount (needs user_allow_other in /etc/fuse.conf unless root).
	AllowOther bool
	// UID and GID map owner 0 of the workspace (the default owner) to a
	// host user and group: what the workspace owns as 0 appears owned by
	// UID, and what it owns as UID appears owned by 0 (a swap, so no two
	// owners merge); chown and new files map back. Zero maps nothing.
	UID, GID uint32
	// CacheTimeout is how long the kernel may cache names, attributes
	// and symbolic links (default 5 s). Changes made through other
	// surfaces invalidate them at once (vfs.FS.Watch), so the timeout
	// only bounds what an invalidation could miss.
	CacheTimeout time.Duration
	// Logger receives failures outside the error vocabulary (nil:
	// slog.Default()).
	Logger *slog.Logger
	// Debug logs every FUSE request.
	Debug bool
	// Checkpoints, for Mount, shows the workspace's checkpoints under
	// the hidden .forkspace/checkpoints/ (nil: none). MountAll asks
	// Workspaces.Open.
	Checkpoints Checkpoints
}

const defaultCacheTimeout = 5 * time.Second

// Workspaces is what a mount of every workspace of a store needs (MountAll).
type Workspaces interface {
	// Names lists the workspaces, sorted.
	Names(ctx context.Context) ([]string, error)
	// Open returns the live FS of workspace name (fs.ErrNotExist when
	// there is none), owned by the caller, and its checkpoints (nil:
	// no .forkspace directory).
	Open(ctx context.Context, name string) (*vfs.FS, Checkpoints, error)
}

// Server is a mounted file system.
type Server struct {
	dir    string
	srv    *fuse.Server
	root   stopper
	once   sync.Once
	closed error
}

// stopper is the root node of a mount: it stops watching its workspaces.
type stopper interface{ stop() }

// Mount mounts fsys at dir and serves it until Unmount. dir must be an
// empty directory (errdefs.ErrNotEmpty, errdefs.ErrNotDir, fs.ErrNotExist
// otherwise, before anything is mounted). A snapshot FS, or
// opts.ReadOnly, mounts read-only.
func Mount(ctx context.Context, dir string, fsys *vfs.FS, opts Options) (*Server, error) {
	opts.ReadOnly = opts.ReadOnly || fsys.ReadOnly()
	root := newRoot(fsys, &opts)
	return mount(dir, root, root, &opts, "forkspace")
}

// MountAll mounts every workspace of ws at dir/<name>/ (looked up and
// listed live): a rename or link between two workspaces is EXDEV.
func MountAll(ctx context.Context, dir string, ws Workspaces, opts Options) (*Server, error) {
	root := newMulti(ws, &opts)
	return mount(dir, root, root, &opts, "forkspace-all")
}

func mount(dir string, root gofs.InodeEmbedder, st stopper, opts *Options, name string) (*Server, error) {
	if err := CheckMountpoint(dir); err != nil {
		st.stop()
		return nil, err
	}
	timeout := opts.cacheTimeout()
	mo := fuse.MountOptions{
		AllowOther:           opts.AllowOther,
		FsName:               name,
		Name:                 "forkspace",
		Options:              []string{"default_permissions"},
		MaxWrite:             1 << 20,
		MaxReadAhead:         1 << 20,
		EnableSymlinkCaching: true,
		// EnableLocks stays off: POSIX and flock locks stay in the
		// kernel, so a read-only close needs no FLUSH (fopenRead).
		// The file system clears setuid and setgid when the kernel
		// says (killpriv.go).
		ExtraCapabilities: fuse.CAP_HANDLE_KILLPRIV_V2,
		Debug:             opts.Debug,
		Logger:            log.New(io.Discard, "", 0),
	}
	if opts.Debug {
		mo.Logger = log.Default()
	}
	if opts.ReadOnly {
		mo.Options = append(mo.Options, "ro")
	}
	// gofs.Mount, with the raw requests' kill flags read (killpriv.go).
	raw := rawFS{gofs.NewNodeFS(root, &gofs.Options{
		MountOptions:    mo,
		EntryTimeout:    &timeout,
		AttrTimeout:     &timeout,
		NegativeTimeout: &timeout,
		NullPermissions: true,
	})}
	srv, err := fuse.NewServer(raw, dir, &mo)
	if err != nil {
		st.stop()
		return nil, fmt.Errorf("mount %s: %w", dir, err)
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		_ = srv.Unmount()
		st.stop()
		return nil, fmt.Errorf("mount %s: %w", dir, err)
	}
	return &Server{dir: dir, srv: srv, root: st}, nil
}

// Dir returns the mount point.
func (s *Server) Dir() string { return s.dir }

// Wait blocks until the file system is unmounted (by Unmount, or from
// outside: fusermount3 -u, forkspace fuse umount).
func (s *Server) Wait() { s.srv.Wait() }

// Unmount unmounts the file system (lazily if it is busy, so it always
// goes away) and stops watching the workspaces. It is idempotent.
//
// It waits for the kernel to end the connection, at most unmountWait
// once the mount is gone from this mount namespace: a namespace made
// while it was mounted (unshare -m, ip netns exec, a container started
// meanwhile: any process of the host) holds a copy of the mount, which
// keeps the connection up until that namespace goes. What reaches the
// file system through such a copy is still served (the caller may
// close the FS: it then fails); a lazily detached mount, whose open
// files keep it, is waited for until they close.
func (s *Server) Unmount() error {
	s.once.Do(func() {
		unmounted := make(chan error, 1)
		go func() {
			err := s.srv.Unmount() // waits for the connection to end
			if err == nil {
				s.srv.Wait()
			}
			unmounted <- err
		}()
		if err := awaitUnmount(s.dir, unmounted); err != nil {
			if err2 := Unmount(s.dir); err2 != nil && !errors.Is(err2, fs.ErrInvalid) {
				s.closed = fmt.Errorf("unmount %s: %w", s.dir, errors.Join(err, err2))
			}
			s.srv.Wait()
		}
		s.root.stop()
	})
	return s.closed
}

// unmountWait bounds how long Unmount waits for the connection to end
// once dir is no longer a mount point here.
const unmountWait = time.Second

// awaitUnmount returns the result of go-fuse's unmount of dir, or nil
// when dir has not been a mount point of this namespace for unmountWait
// (a copy in another namespace holds the connection).
func awaitUnmount(dir string, unmounted <-chan error) error {
	tick := time.NewTicker(unmountWait / 20)
	defer tick.Stop()
	var gone time.Time // since when dir is seen unmounted
	for {
		select {
		case err := <-unmounted:
			return err
		case now := <-tick.C:
			if mounted, err := Mounted(dir); err != nil || mounted {
				gone = time.Time{}
			} else if gone.IsZero() {
				gone = now
			} else if now.Sub(gone) >= unmountWait {
				return nil
			}
		}
	}
}

// CheckMountpoint fails unless dir is an empty directory that is not
// mounted: fs.ErrNotExist, errdefs.ErrNotDir, errdefs.ErrNotEmpty, or
// errdefs.ErrBusy for a mount point (a dead mount, "transport endpoint is
// not connected", included), each with the remedy in the message.
func CheckMountpoint(dir string) error {
	const op = "mountpoint"
	if mounted, err := Mounted(dir); err != nil {
		return err
	} else if mounted {
		return &fs.PathError{Op: op, Path: dir, Err: fmt.Errorf("%w: already a mount point (forkspace fuse umount %s)", errdefs.ErrBusy, dir)}
	}
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return err
	case !fi.IsDir():
		return &fs.PathError{Op: op, Path: dir, Err: fmt.Errorf("%w: mount point must be an empty directory", errdefs.ErrNotDir)}
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if names, _ := f.Readdirnames(1); len(names) > 0 {
		return &fs.PathError{Op: op, Path: dir, Err: fmt.Errorf("%w: mount point must be an empty directory (it holds %q)", errdefs.ErrNotEmpty, names[0])}
	}
	return nil
}

// Mounted reports whether dir is a mount point (in /proc/self/mountinfo),
// including a FUSE mount whose daemon died.
func Mounted(dir string) (bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, err
	}
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false, fmt.Errorf("read mount table: %w", err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && unescapeMount(f[4]) == abs {
			return true, nil
		}
	}
	return false, nil
}

// unescapeMount decodes the octal escapes (\040 for a space) of a path in
// /proc/self/mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Unmount detaches the FUSE mount at dir lazily (busy files keep it
// until they close), whether its daemon is alive or was killed: no
// "transport endpoint is not connected" is left behind. It runs
// fusermount3 -u -z, or unmount(2) with MNT_DETACH where fusermount3 is
// missing or fails as root. A dir that is not a mount point is
// fs.ErrInvalid.
func Unmount(dir string) error {
	mounted, err := Mounted(dir)
	if err != nil {
		return err
	}
	if !mounted {
		return &fs.PathError{Op: "umount", Path: dir, Err: fmt.Errorf("%w: not a mount point", fs.ErrInvalid)}
	}
	var ferr error
	if bin, err := exec.LookPath("fusermount3"); err == nil {
		out, err := exec.Command(bin, "-u", "-z", dir).CombinedOutput()
		if err == nil {
			return nil
		}
		ferr = fmt.Errorf("fusermount3 -u -z: %w: %s", err, strings.TrimSpace(string(out)))
	}
	if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
		return &fs.PathError{Op: "umount", Path: dir, Err: errors.Join(ferr, err)}
	}
	return nil
}

// cacheTimeout is Options.CacheTimeout or its default.
func (o *Options) cacheTimeout() time.Duration {
	if o.CacheTimeout == 0 {
		return defaultCacheTimeout
	}
	return o.CacheTimeout
}

// logger returns opts' logger for the component.
func (o *Options) logger() *slog.Logger {
	l := o.Logger
	if l == nil {
		l = slog.Default()
	}
	return l.With("component", "fusefs")
}
