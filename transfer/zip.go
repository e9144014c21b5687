package transfer

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/forkspace/forkspace/vfs"
)

// zipMaxLink bounds the size of a symbolic link's target read from a zip
// entry (its body), as a link target is a path, not file data.
const zipMaxLink = 4096

// IsZip reports whether the first bytes of an archive are a zip archive's
// (a local file header, or the end record of an empty archive).
func IsZip(magic []byte) bool {
	return strings.HasPrefix(string(magic), "PK\x03\x04") || strings.HasPrefix(string(magic), "PK\x05\x06")
}

// ImportZip copies a zip archive (r of size bytes) into directory dstPath
// of dst, like ImportTar. Entries are taken in the archive's order with
// missing parent directories created; symbolic links are entries whose
// Unix mode says so (their body is the target). Zip keeps no owners, so
// files get the workspace's defaults.
func ImportZip(ctx context.Context, dst *vfs.FS, dstPath string, r io.ReaderAt, size int64, opts Options) error {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return errorAt("import", "", fmt.Errorf("read zip: %w: %w", fs.ErrInvalid, err))
	}
	return importInto(ctx, dst, dstPath, &zipSource{zr: zr, skip: opts.Skip}, opts)
}

// ExportZip writes srcPath of src to w as a zip archive (deflate). Hard
// links become copies (zip has no links between entries), owners and
// extended attributes are not kept, and times keep whole seconds.
func ExportZip(ctx context.Context, src *vfs.FS, srcPath string, w io.Writer, opts Options) error {
	const op = "export"
	s, err := newWSSource(src, srcPath, opts.Skip)
	if err != nil {
		return errorAt(op, srcPath, err)
	}
	s.copyLinks = true
	return run(ctx, op, s, &zipSink{zw: zip.NewWriter(w)}, opts)
}

// zipSource reads the entries of a zip archive.
type zipSource struct {
	zr   *zip.Reader
	skip func(string, error) error
}

var _ source = (*zipSource)(nil)

func (s *zipSource) walk(ctx context.Context, fn func(*entry, io.Reader) error) error {
	for _, f := range s.zr.File {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.file(f, fn); err != nil {
			return err
		}
	}
	return nil
}

func (s *zipSource) file(f *zip.File, fn func(*entry, io.Reader) error) error {
	m := f.Mode()
	if m&(fs.ModeDevice|fs.ModeNamedPipe|fs.ModeSocket|fs.ModeIrregular) != 0 {
		return unsupported(s.skip, f.Name, typeName(m))
	}
	name, err := cleanName(f.Name)
	if err != nil {
		return &fs.PathError{Op: "read zip", Path: f.Name, Err: err}
	}
	e := &entry{name: name, mode: modeBits(m), mtime: f.Modified, size: int64(f.UncompressedSize64)}
	if m.IsDir() || strings.HasSuffix(f.Name, "/") {
		e.kind, e.size = kindDir, 0
		if m.Perm() == 0 {
			e.mode |= 0o755
		}
		return fn(e, nil)
	}
	if e.mode.Perm() == 0 && m&fs.ModeSymlink == 0 {
		e.mode |= 0o644 // written by a tool that records no Unix mode
	}
	rc, err := f.Open()
	if err != nil {
		return &fs.PathError{Op: "read zip", Path: f.Name, Err: fmt.Errorf("%w: %w", fs.ErrInvalid, err)}
	}
	defer rc.Close()
	body := &zipBody{r: rc, name: f.Name}
	if m&fs.ModeSymlink != 0 {
		target, err := io.ReadAll(io.LimitReader(body, zipMaxLink+1))
		if err != nil {
			return err
		}
		if len(target) == 0 || len(target) > zipMaxLink {
			return &fs.PathError{Op: "read zip", Path: f.Name, Err: fmt.Errorf("%w: symbolic link target of %d bytes", fs.ErrInvalid, len(target))}
		}
		e.kind, e.size, e.target = kindSymlink, 0, string(target)
		return fn(e, nil)
	}
	e.kind = kindFile
	if err := fn(e, body); err != nil {
		return err
	}
	// The checksum is verified at the end of the body, which a sink that
	// copies the declared size never reads to.
	_, err = io.Copy(io.Discard, body)
	return err
}

// zipBody marks errors of a zip entry's body (a bad checksum, a damaged
// stream) as invalid input.
type zipBody struct {
	r    io.Reader
	name string
}

func (b *zipBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = &fs.PathError{Op: "read zip", Path: b.name, Err: fmt.Errorf("%w: %w", fs.ErrInvalid, err)}
	}
	return n, err
}

// zipSink writes entries as a zip archive: directories as "name/" entries,
// files deflated, symbolic links with their target as the body and the
// link bit in the Unix mode (the Info-ZIP convention).
type zipSink struct {
	zw  *zip.Writer
	buf []byte
}

var _ sink = (*zipSink)(nil)

func (s *zipSink) put(_ context.Context, e *entry, body io.Reader) error {
	if e.name == "." {
		return nil
	}
	h := &zip.FileHeader{Name: e.name, Modified: e.mtime, Method: zip.Deflate}
	switch e.kind {
	case kindDir:
		h.Name, h.Method = e.name+"/", zip.Store
		h.SetMode(fs.ModeDir | e.mode)
	case kindSymlink:
		h.Method = zip.Store
		h.SetMode(fs.ModeSymlink | 0o777)
		body = strings.NewReader(e.target)
	default:
		h.SetMode(e.mode)
	}
	w, err := s.zw.CreateHeader(h)
	if err != nil || body == nil {
		return err
	}
	if s.buf == nil {
		s.buf = make([]byte, bufSize)
	}
	_, err = io.CopyBuffer(w, body, s.buf)
	return err
}

func (s *zipSink) finish(context.Context) error { return s.zw.Close() }

func (s *zipSink) close() error { return nil }

// archiveExts are the file name endings (lower case) of archive formats,
// with whether this package writes them; ArchiveFormat uses them to tell
// an archive name from a directory name.
var archiveExts = []struct {
	ext       string
	supported bool
}{
	{".tar", true}, {".tar.gz", true}, {".tgz", true}, {".zip", true},
	{".tar.bz2", false}, {".tbz", false}, {".tbz2", false}, {".tar.xz", false}, {".txz", false},
	{".tar.zst", false}, {".tzst", false}, {".tar.lz4", false}, {".tar.lz", false}, {".tar.z", false},
	{".gz", false}, {".bz2", false}, {".xz", false}, {".zst", false}, {".lz4", false},
	{".7z", false}, {".rar", false}, {".jar", false}, {".cpio", false}, {".iso", false},
}

// Format is a kind of export destination.
type Format int

const (
	// FormatDir is a host directory.
	FormatDir Format = iota
	// FormatTar is a tar archive (gzip-compressed for .tar.gz and .tgz).
	FormatTar
	// FormatZip is a zip archive.
	FormatZip
)

// ArchiveFormat tells from a destination's name what to write: a tar or a
// zip archive for their extensions, a directory for any name that does not
// end like an archive, and an error wrapping errors.ErrUnsupported for an
// archive format this package cannot write (a *FormatError: ".tar.xz",
// ".7z"…), so that a
// name meant as an archive never silently becomes a directory. gzip
// reports whether a tar archive is compressed.
func ArchiveFormat(name string) (f Format, gzip bool, err error) {
	base := strings.ToLower(path.Base(name))
	best := -1 // the longest ending that matches
	for i, a := range archiveExts {
		if strings.HasSuffix(base, a.ext) && base != a.ext && (best < 0 || len(a.ext) > len(archiveExts[best].ext)) {
			best = i
		}
	}
	if best < 0 {
		return FormatDir, false, nil
	}
	a := archiveExts[best]
	if !a.supported {
		return 0, false, &FormatError{Ext: a.ext}
	}
	switch a.ext {
	case ".zip":
		return FormatZip, false, nil
	case ".tar":
		return FormatTar, false, nil
	}
	return FormatTar, true, nil
}

// FormatError is a destination named like an archive of a format this
// package does not write. It matches errors.ErrUnsupported and
// fs.ErrInvalid.
type FormatError struct {
	Ext string // the name's ending, such as ".tar.xz"
}

func (e *FormatError) Error() string {
	return "cannot write " + e.Ext + " archives: name a .tar, .tar.gz, .tgz or .zip archive, or a directory"
}

func (e *FormatError) Is(target error) bool {
	return target == errors.ErrUnsupported || target == fs.ErrInvalid
}
