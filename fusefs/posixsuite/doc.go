// Package posixsuite is a POSIX conformance suite of pjdfstest's breadth,
// written for forkspace: it runs against any directory of a Linux file
// system, as root, and is run on the host's file system (TestHostFS,
// ext4 on the project's machines) and through the real mounts
// ('forkspace fuse mount --allow-other' and 'serve --fuse', in
// cmd/forkspace/posix_test.go). An expectation holds on ext4 or it is not
// Linux's behaviour; the bar for the mounts is the same, zero failures.
//
// # Families
//
// One table per system call family, in the file of its name: chmod,
// chown, link, mkdir, mkfifo and mknod, open, rename (renameat2's
// RENAME_NOREPLACE and RENAME_EXCHANGE included), rmdir, symlink and
// readlink, truncate and ftruncate, unlink, utimensat, posix_fallocate
// (fallocate(2) with mode 0, which glibc's posix_fallocate calls), and
// granular. pjdfstest's granular tests check NFSv4 ACLs on FreeBSD and
// are skipped on Linux; here granular is the mode-bit checks the same
// operations rest on: search, read and write on directories for owner,
// group (primary and supplementary) and other, one class at a time, and
// root's exemption. The path errors every path-taking call shares
// (ENOENT and ENOTDIR in the prefix, ENAMETOOLONG for a 256-byte name
// and a 4096-byte path, ELOOP, EACCES without search permission, success
// with a 255-byte name and a 4095-byte path) are added to each family by
// pathCases. Cases that make one per file type (regular, directory,
// FIFO, socket, symlink, block and character device) come from forKinds.
//
// Every case asserts something: an errno, or the resulting state (mode,
// owner, size, link count, times, contents). What this kernel cannot
// check is left out, never counted as passing: EFAULT (Go passes valid
// pointers), ENOSPC and EDQUOT (fusefs has its own quota tests), EMLINK,
// ETXTBSY, and the chflags(2) flags of BSD, which Linux lacks.
//
// EROFS has its own entry points, since it needs a read-only file system
// holding a known tree: ReadOnlyFixture makes the tree, RunReadOnly
// checks that every change is refused (EROFS, or EEXIST where Linux
// finds that first) and reads still work. TestHostFSReadOnly runs it on
// a read-only bind mount; cmd/forkspace on a --read-only mount, a
// checkpoint's mount and .forkspace/checkpoints/<label>.
//
// # Other users
//
// The suite runs as root; an op as another user (alice 65534:65532, bob
// 65533:65531, alice with bob's group as a supplementary group) runs in a
// child process: a copy of the test binary any user may execute, started
// with SysProcAttr.Credential, runs one op (ops.go) and prints the
// errno's name. So TestMain of a package that runs the suite calls
// ServeChild first, and Cleanup at the end.
//
// # Running it alone
//
//	go test ./fusefs/posixsuite                    # on the host's file system
//	go test ./cmd/forkspace -run 'FusePOSIX'       # through the mounts (root, /dev/fuse)
//
// Run(t, dir) takes any empty directory, so the suite also runs against
// another file system mounted by hand. Without root (or FUSE) the tests
// skip, and fail under CI=true.
package posixsuite
