package transfer

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/forkspace/forkspace/internal/tmpfile"
	"github.com/zeebo/xxh3"
)

// kind is the type of an entry.
type kind uint8

const (
	kindDir kind = iota + 1
	kindFile
	kindSymlink
	// kindHardlink is another name for an entry written earlier in the
	// same transfer (entry.target).
	kindHardlink
)

// entry is one item of a tree in transit, named relative to the tree's root
// ("." is the root directory itself).
type entry struct {
	name   string
	kind   kind
	mode   fs.FileMode // permission and setuid/setgid/sticky bits
	uid    int
	gid    int
	mtime  time.Time
	atime  time.Time // zero when unknown
	size   int64     // regular files
	target string    // symlink target, or hard-link target name
	// xattrs are the extended attributes of a file or directory (nil
	// when none; links carry none).
	xattrs map[string][]byte
}

// source produces a tree's entries in pre-order (a directory before its
// contents). fn receives each entry and, for regular files, its contents
// (valid only during the call).
type source interface {
	walk(ctx context.Context, fn func(e *entry, body io.Reader) error) error
}

// visitor is a source that can also walk without opening file contents
// (bodies false), so its entries and bytes can be counted cheaply.
type visitor interface {
	visit(ctx context.Context, bodies bool, fn func(e *entry, body io.Reader) error) error
}

// count returns the number of entries of v and the bytes of its files.
func count(ctx context.Context, v visitor) (files, bytes int64, err error) {
	err = v.visit(ctx, false, func(e *entry, _ io.Reader) error {
		files++
		if e.kind == kindFile {
			bytes += e.size
		}
		return nil
	})
	return files, bytes, err
}

// sink writes entries under a target. finish applies what had to wait for
// the whole tree (directory modes and times); close releases resources.
type sink interface {
	put(ctx context.Context, e *entry, body io.Reader) error
	finish(ctx context.Context) error
	close() error
}

// run copies src into dst, validating every entry first.
func run(ctx context.Context, op string, src source, dst sink, opts Options) (err error) {
	defer func() { err = errors.Join(err, dst.close()) }()
	files, bytes := int64(-1), int64(-1)
	if v, ok := src.(visitor); ok && opts.Progress != nil && opts.Totals {
		if files, bytes, err = count(ctx, v); err != nil {
			return fmt.Errorf("%s: count: %w", op, err)
		}
	}
	m := newMeter(opts.Progress, files, bytes)
	written := newNameSet() // non-directory names written so far
	defer written.close()
	var pl *pipeline
	if st, ok := dst.(storer); ok {
		pl = newPipeline(ctx, op, st)
	}
	err = src.walk(ctx, func(e *entry, body io.Reader) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := check(e, written); err != nil {
			return &fs.PathError{Op: op, Path: e.name, Err: err}
		}
		if body != nil {
			body = &reader{ctx: ctx, r: body, m: m}
		}
		if err := put(ctx, pl, dst, e, body); err != nil {
			return errorAt(op, e.name, err)
		}
		if e.kind != kindDir {
			written.add(e.name)
		}
		m.entry()
		return nil
	})
	if pl != nil {
		err = pl.close(err)
	}
	if err != nil {
		return errorAt(op, "", err)
	}
	if err := dst.finish(ctx); err != nil {
		return errorAt(op, "", err)
	}
	return nil
}

// put hands e to dst, through pl when there is one: entries without a
// body and small files are queued, a larger file is stored as it is read
// (its reader is valid only now) and then queued.
func put(ctx context.Context, pl *pipeline, dst sink, e *entry, body io.Reader) error {
	switch {
	case pl == nil:
		return dst.put(ctx, e, body)
	case body == nil || e.kind == kindFile && e.size <= smallFile:
		return pl.add(e, body)
	}
	return pl.addStream(e, body)
}

// errorAt keeps an existing *fs.PathError (it names the failing path) and
// wraps anything else as one for name.
func errorAt(op, name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	if name == "" {
		return fmt.Errorf("%s: %w", op, err)
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// nameSet holds names by their 64-bit hash: 8 bytes each instead of the
// name (the odds that a name not written hashes like one that was are
// 2⁻⁶⁴ per pair; and a hard link let through that way still names a file
// of the target tree, never a host path). Past setMemory hashes the map
// is written, sorted, as a run of an unlinked temporary file and emptied,
// so a transfer of millions of files holds a bounded set in memory; a
// lookup (a hard link: rare) binary-searches the runs with a read a step
// (a read error finds nothing: the link is refused). A failed spill keeps
// the hashes in memory instead.
type nameSet struct {
	mem    map[uint64]struct{}
	file   tmpfile.Log
	runs   []int64 // the number of hashes of each run, in file order
	failed bool
}

// setMemory is how many hashes a nameSet holds in memory.
var setMemory = 1 << 18

func newNameSet() *nameSet { return &nameSet{mem: map[uint64]struct{}{}} }

func (s *nameSet) add(name string) {
	s.mem[xxh3.HashString(name)] = struct{}{}
	if len(s.mem) >= setMemory && !s.failed {
		s.failed = s.spill() != nil
	}
}

// spill writes the hashes in memory as a sorted run.
func (s *nameSet) spill() error {
	hs := slices.Sorted(maps.Keys(s.mem))
	buf := make([]byte, 0, 8*len(hs))
	for _, h := range hs {
		buf = binary.BigEndian.AppendUint64(buf, h)
	}
	if err := s.file.Append(buf); err != nil {
		return err
	}
	s.runs = append(s.runs, int64(len(hs)))
	s.mem = map[uint64]struct{}{}
	return nil
}

func (s *nameSet) has(name string) bool {
	h := xxh3.HashString(name)
	if _, ok := s.mem[h]; ok {
		return true
	}
	var at int64 // the first hash of the run
	for _, n := range s.runs {
		var b [8]byte
		lo, hi := int64(0), n
		for lo < hi {
			mid := lo + (hi-lo)/2
			if _, err := s.file.ReadAt(b[:], 8*(at+mid)); err != nil {
				return false
			}
			switch v := binary.BigEndian.Uint64(b[:]); {
			case v == h:
				return true
			case v < h:
				lo = mid + 1
			default:
				hi = mid
			}
		}
		at += n
	}
	return false
}

// close removes the spill file, if any.
func (s *nameSet) close() { _ = s.file.Close() }

// check validates an entry's names: a clean relative path, and a hard link
// only to a non-directory already written by this transfer.
func check(e *entry, written *nameSet) error {
	if !validName(e.name) || (e.name == "." && e.kind != kindDir) {
		return fmt.Errorf("%w: bad entry name", fs.ErrInvalid)
	}
	if e.kind == kindHardlink && !written.has(e.target) {
		return fmt.Errorf("%w: hard link to %q, which is not an earlier entry of this transfer", fs.ErrInvalid, e.target)
	}
	return nil
}

// validName reports whether name is "." or a relative slash path without
// empty, "." or ".." elements or NUL bytes. Unlike fs.ValidPath it accepts
// any bytes, as host file names may not be UTF-8.
func validName(name string) bool {
	if name == "." {
		return true
	}
	if name == "" || strings.IndexByte(name, 0) >= 0 {
		return false
	}
	for elem := range strings.SplitSeq(name, "/") {
		if elem == "" || elem == "." || elem == ".." {
			return false
		}
	}
	return true
}

// cleanName turns an archive entry name into a clean relative name: a
// leading "./" and trailing "/" are dropped, "." elements removed; absolute
// names and ".." elements are rejected (not clamped), wrapping
// fs.ErrInvalid.
func cleanName(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%w: empty name", fs.ErrInvalid)
	}
	if strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("%w: absolute name %q", fs.ErrInvalid, name)
	}
	if strings.IndexByte(name, 0) >= 0 {
		return "", fmt.Errorf("%w: NUL byte in name %q", fs.ErrInvalid, name)
	}
	for elem := range strings.SplitSeq(name, "/") {
		if elem == ".." {
			return "", fmt.Errorf("%w: name %q escapes the target", fs.ErrInvalid, name)
		}
	}
	return path.Clean(name), nil
}

// split returns the parent and base of a clean relative name ("." for a
// top-level entry's parent).
func split(name string) (dir, base string) {
	dir, base = path.Split(name)
	if dir == "" {
		return ".", base
	}
	return strings.TrimSuffix(dir, "/"), base
}

// modeBits keeps the bits of m an entry carries.
func modeBits(m fs.FileMode) fs.FileMode {
	return m & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// unsupported reports a source entry that has no workspace form (what
// describes it) through skip, or as an error wrapping
// errors.ErrUnsupported.
func unsupported(skip func(string, error) error, name, what string) error {
	err := &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: %s entries are not supported", errors.ErrUnsupported, what)}
	if skip == nil {
		return err
	}
	return skip(name, err)
}

func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeDevice != 0 && m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}
