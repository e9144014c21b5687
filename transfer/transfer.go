package transfer

import (
	"context"
	"io"

	"github.com/forkspace/forkspace/vfs"
)

// ImportDir copies the host directory srcDir (following a link only if
// srcDir itself is one) into directory dstPath of dst, created if missing;
// dstPath takes srcDir's mode, owner, times and extended attributes.
// See the package documentation for what is preserved and how existing
// entries are treated. Errors are *fs.PathError where a path is at fault;
// a failed import may leave the entries written before the failure.
func ImportDir(ctx context.Context, dst *vfs.FS, dstPath, srcDir string, opts Options) error {
	const op = "import"
	src, err := newHostSource(srcDir, opts.Skip)
	if err != nil {
		return errorAt(op, srcDir, err)
	}
	sink, err := newWSSink(ctx, dst, dstPath)
	if err != nil {
		return errorAt(op, dstPath, err)
	}
	return run(ctx, op, src, sink, opts)
}

// ImportTar extracts the tar stream r (plain or gzip, detected by its
// magic number) into directory dstPath of dst, created if missing; a "./"
// entry gives dstPath its attributes. Entries
// with absolute names, ".." elements, or hard links to anything but an
// earlier entry are rejected with an error wrapping fs.ErrInvalid, as is
// an entry that would be written through a symbolic link; nothing outside
// dstPath is written. A damaged stream wraps fs.ErrInvalid.
func ImportTar(ctx context.Context, dst *vfs.FS, dstPath string, r io.Reader, opts Options) error {
	const op = "import"
	sink, err := newWSSink(ctx, dst, dstPath)
	if err != nil {
		return errorAt(op, dstPath, err)
	}
	return run(ctx, op, &tarSource{r: r, skip: opts.Skip}, sink, opts)
}

// ExportDir copies srcPath of src (a directory, or a single file written
// under its base name) into the host directory dstDir, created if missing
// (and then given srcPath's mode and times). Nothing is written through a
// symbolic link found in dstDir. Owners are set only when running as root.
func ExportDir(ctx context.Context, src *vfs.FS, srcPath, dstDir string, opts Options) error {
	const op = "export"
	s, err := newWSSource(src, srcPath)
	if err != nil {
		return errorAt(op, srcPath, err)
	}
	sink, err := newHostSink(dstDir)
	if err != nil {
		return errorAt(op, dstDir, err)
	}
	return run(ctx, op, s, sink, opts)
}

// ExportTar writes srcPath of src (a directory's contents, or a single
// file under its base name) to w as a PAX tar stream, gzip-compressed when
// opts.Gzip is set. Entries are in name order with relative names; the
// stream is complete only when ExportTar returns nil. w is not closed.
func ExportTar(ctx context.Context, src *vfs.FS, srcPath string, w io.Writer, opts Options) error {
	const op = "export"
	s, err := newWSSource(src, srcPath)
	if err != nil {
		return errorAt(op, srcPath, err)
	}
	return run(ctx, op, s, newTarSink(w, opts.Gzip), opts)
}
