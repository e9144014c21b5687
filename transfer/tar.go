package transfer

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/forkspace/forkspace/vfs"
)

// tarSource reads entries from a tar stream, plain or gzip-compressed.
type tarSource struct {
	r    io.Reader
	skip func(string, error) error
}

var _ source = (*tarSource)(nil)

var gzipMagic = []byte{0x1f, 0x8b}

// xattrPrefix starts the PAX records that carry extended attributes (the
// convention of GNU tar, bsdtar and star).
const xattrPrefix = "SCHILY.xattr."

func (s *tarSource) walk(ctx context.Context, fn func(*entry, io.Reader) error) error {
	br := bufio.NewReader(s.r)
	var (
		r  io.Reader = br
		zr *gzip.Reader
	)
	if magic, err := br.Peek(2); err == nil && string(magic) == string(gzipMagic) {
		var err error
		if zr, err = gzip.NewReader(br); err != nil {
			return fmt.Errorf("read gzip: %w: %w", fs.ErrInvalid, err)
		}
		defer zr.Close()
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return checkGzipEnd(zr)
		}
		if err != nil {
			return fmt.Errorf("read tar: %w: %w", fs.ErrInvalid, err)
		}
		e, err := tarEntry(h)
		if errors.Is(err, errors.ErrUnsupported) {
			if err := unsupported(s.skip, h.Name, tarTypeName(h)); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "read tar", Path: h.Name, Err: err}
		}
		if e == nil {
			continue
		}
		var body io.Reader
		if e.kind == kindFile {
			body = tr
		}
		if err := fn(e, body); err != nil {
			return err
		}
	}
}

// tarEntry converts a header; it returns nil for headers that carry no
// entry (global PAX headers) and errors.ErrUnsupported for devices, FIFOs
// and sparse files (whose declared size, unbounded by the archive's, would
// be streamed as zeros).
func tarEntry(h *tar.Header) (*entry, error) {
	if h.Typeflag == tar.TypeXGlobalHeader {
		return nil, nil
	}
	if sparse(h) {
		return nil, errors.ErrUnsupported
	}
	name, err := cleanName(h.Name)
	if err != nil {
		return nil, err
	}
	e := &entry{
		name: name, mode: modeBits(h.FileInfo().Mode()), uid: h.Uid, gid: h.Gid,
		mtime: h.ModTime, atime: h.AccessTime, size: h.Size,
	}
	for k, v := range h.PAXRecords {
		if name, ok := strings.CutPrefix(k, xattrPrefix); ok && name != "" {
			if e.xattrs == nil {
				e.xattrs = make(map[string][]byte)
			}
			e.xattrs[name] = []byte(v)
		}
	}
	switch h.Typeflag {
	case tar.TypeReg:
		e.kind = kindFile
	case tar.TypeDir:
		e.kind, e.size = kindDir, 0
	case tar.TypeSymlink:
		e.kind, e.size, e.target = kindSymlink, 0, h.Linkname
	case tar.TypeLink:
		if e.target, err = cleanName(h.Linkname); err != nil {
			return nil, fmt.Errorf("hard link: %w", err)
		}
		e.kind, e.size = kindHardlink, 0
	default:
		return nil, errors.ErrUnsupported
	}
	return e, nil
}

// sparse reports whether h is a sparse file, in the old GNU form or as
// GNU PAX records.
func sparse(h *tar.Header) bool {
	if h.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// tarTypeName describes an entry tarEntry does not support.
func tarTypeName(h *tar.Header) string {
	if sparse(h) {
		return "sparse file"
	}
	return typeName(h.FileInfo().Mode())
}

// checkGzipEnd reads a gzip stream (nil: none) to its end once the tar
// archive in it ended, so a stream cut off in its last block or its
// trailer (checksum and size) is refused, not taken as complete.
func checkGzipEnd(zr *gzip.Reader) error {
	if zr == nil {
		return nil
	}
	zr.Multistream(false)
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return fmt.Errorf("read gzip: %w: %w", fs.ErrInvalid, err)
	}
	return nil
}

// tarSink writes entries as a PAX tar stream (nanosecond times), gzip
// compressed if asked. Names are relative; directories end in "/"; the
// root directory itself is not written. Headers are encoded by
// tarHeaders, bodies copied and padded here: the stream is what
// archive/tar's Writer writes for the same headers and bodies.
type tarSink struct {
	bw  *bufio.Writer // batches the small writes of headers and bodies
	zw  *gzip.Writer
	w   io.Writer // bw, or zw over it
	buf []byte
	// h and pax are reused for every entry (encode keeps nothing of
	// them): no header or record map is allocated per entry.
	h    tar.Header
	pax  map[string]string
	hdrs tarHeaders
}

var _ sink = (*tarSink)(nil)

// tarWriteBuffer is how many bytes of the stream tarSink gathers before
// writing: a tar of small files is otherwise two or three small writes per
// entry.
const tarWriteBuffer = 1 << 20

func newTarSink(w io.Writer, gz bool) *tarSink {
	s := &tarSink{bw: bufio.NewWriterSize(w, tarWriteBuffer)}
	s.w = s.bw
	if gz {
		s.zw = gzip.NewWriter(s.bw)
		s.w = s.zw
	}
	return s
}

func (s *tarSink) put(_ context.Context, e *entry, body io.Reader) error {
	if e.name == "." {
		return nil
	}
	h := s.header(e)
	hdr, err := s.hdrs.encode(h)
	if err != nil {
		return err
	}
	if _, err := s.w.Write(hdr); err != nil {
		return err
	}
	if h.Typeflag != tar.TypeReg {
		return nil
	}
	return s.body(body, h.Size)
}

// header fills the reused header with e's.
func (s *tarSink) header(e *entry) *tar.Header {
	h := &s.h
	*h = tar.Header{
		Name: e.name, Mode: int64(vfs.UnixMode(e.mode)), Uid: e.uid, Gid: e.gid,
		ModTime: e.mtime, AccessTime: e.atime, Format: tar.FormatPAX,
	}
	if len(e.xattrs) > 0 {
		if s.pax == nil {
			s.pax = make(map[string]string, len(e.xattrs))
		}
		clear(s.pax)
		for name, v := range e.xattrs {
			s.pax[xattrPrefix+name] = string(v)
		}
		h.PAXRecords = s.pax
	}
	switch e.kind {
	case kindDir:
		h.Typeflag, h.Name = tar.TypeDir, e.name+"/"
	case kindSymlink:
		h.Typeflag, h.Linkname = tar.TypeSymlink, e.target
	case kindHardlink:
		h.Typeflag, h.Linkname = tar.TypeLink, e.target
	default:
		h.Typeflag, h.Size = tar.TypeReg, e.size
	}
	return h
}

// body copies a regular file's size bytes from body and pads them to a
// block; a body of another length fails, as archive/tar's Writer fails it.
func (s *tarSink) body(body io.Reader, size int64) error {
	if s.buf == nil {
		s.buf = make([]byte, bufSize)
	}
	n, err := io.CopyBuffer(s.w, io.LimitReader(body, size+1), s.buf)
	switch {
	case err != nil:
		return err
	case n > size:
		return tar.ErrWriteTooLong
	case n < size:
		return fmt.Errorf("archive/tar: missed writing %d bytes", size-n)
	}
	_, err = s.w.Write(zeros[:padding(size)])
	return err
}

// finish completes the archive (and the gzip stream) and writes what is
// buffered.
func (s *tarSink) finish(context.Context) error {
	if _, err := s.w.Write(zeros[:]); err != nil { // the end of the archive
		return err
	}
	if s.zw != nil {
		if err := s.zw.Close(); err != nil {
			return err
		}
	}
	return s.bw.Flush()
}

func (s *tarSink) close() error { return nil }
