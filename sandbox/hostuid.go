package sandbox

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// The host uids (and gids, the same numbers) a root server runs commands
// as: HostUIDCount of them from HostUIDBase, one per work dir with a run
// in flight (see the package documentation, Ownership), each with the
// supplementary group HostGID, the only group that may search the default
// base. No account of the host should use them.
const (
	HostUIDBase  = 2_000_000_000
	HostUIDCount = 65536
	HostGID      = HostUIDBase + HostUIDCount
)

// hostUIDs reports whether commands run under a host uid of their own
// (forkspace runs as root) rather than forkspace's uid.
func hostUIDs() bool { return os.Geteuid() == 0 }

// leaseDir holds one lock file per host uid; a run holds the flock of its
// uid's file while it runs, so two runs in flight never share a uid. It is
// in /run, the same for every process whatever its TMPDIR (os.TempDir()
// on a host without /run).
func leaseDir() string {
	base := "/run"
	if fi, err := os.Stat(base); err != nil || !fi.IsDir() {
		base = os.TempDir()
	}
	return filepath.Join(base, "forkspace-sandbox-uids")
}

// uidLease is a host uid held for one run.
type uidLease struct {
	uid int
	f   *os.File
}

func (l *uidLease) release() { l.f.Close() }

// leaseUID takes a host uid for a run in work dir dir: the uid that owns
// dir when it is one of the range and no other run holds it (the usual
// case: nothing to chown), else the first free one from a slot derived
// from dir's name.
func leaseUID(dir string) (*uidLease, error) {
	if err := os.MkdirAll(leaseDir(), 0o700); err != nil {
		return nil, fmt.Errorf("exec: host uid leases: %w", err)
	}
	h := fnv.New32a()
	h.Write([]byte(dir))
	first := int(h.Sum32() % HostUIDCount)
	if uid, ok := ownerUID(dir); ok {
		first = uid - HostUIDBase
	}
	for i := range HostUIDCount {
		uid := HostUIDBase + (first+i)%HostUIDCount
		f, err := os.OpenFile(filepath.Join(leaseDir(), strconv.Itoa(uid)), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("exec: host uid leases: %w", err)
		}
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return &uidLease{uid: uid, f: f}, nil
		}
		f.Close()
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("exec: host uid leases: %w", err)
		}
	}
	return nil, fmt.Errorf("exec: all %d sandbox host uids are in use: %w", HostUIDCount, fs.ErrExist)
}

// ownerUID returns the host uid owning dir when it is one of the range.
func ownerUID(dir string) (int, bool) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Uid < HostUIDBase || st.Uid >= HostUIDBase+HostUIDCount {
		return 0, false
	}
	return int(st.Uid), true
}

// searchable makes dir, a directory of root's, searchable by group
// HostGID only (mode 0710) when commands run under host uids of their own.
func searchable(dir string) error {
	if !hostUIDs() {
		return nil
	}
	if err := os.Lchown(dir, -1, HostGID); err != nil {
		return err
	}
	return os.Chmod(dir, 0o710)
}

// chownTree gives dir and everything beneath it to uid (and gid uid),
// without following symbolic links.
func chownTree(dir string, uid int) error {
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
}

// ownAt gives p in host to uid (and gid uid) unless it has them, and
// returns p's stat after that; uid 0 leaves the owner alone.
func ownAt(host *os.Root, p string, uid int) (fs.FileInfo, error) {
	fi, err := host.Lstat(p)
	if err != nil || uid == 0 {
		return fi, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid && int(st.Gid) == uid {
		return fi, nil
	}
	if err := host.Lchown(p, uid, uid); err != nil {
		return nil, err
	}
	return host.Lstat(p)
}

// checkReachable fails, naming the directory, when the run's host uid
// cannot reach dir: bubblewrap resolves the work dir and the sandbox's
// /etc files as that uid, so every ancestor must be searchable by others
// or by group HostGID.
func checkReachable(dir string) error {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("exec: work dir: %w", err)
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		if fi.Mode().Perm()&0o001 == 0 && (st == nil || st.Gid != HostGID || fi.Mode().Perm()&0o010 == 0) {
			return fmt.Errorf("exec: work dir %s: %w: its ancestor %s (mode %v) is not searchable by others or group %d, and commands of a root server run as unprivileged host uids of that group",
				dir, fs.ErrPermission, d, fi.Mode().Perm(), HostGID)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}
