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
// entries are treated. Errors are *fs.PathError where a path is at fault.
// The import is atomic (see the package documentation): a failed one
// leaves dst exactly as it was.
func ImportDir(ctx context.Context, dst *vfs.FS, dstPath, srcDir string, opts Options) error {
	src, err := newHostSource(srcDir, opts.Skip)
	if err != nil {
		return errorAt("import", srcDir, err)
	}
	return importInto(ctx, dst, dstPath, src, opts)
}

// importInto copies src into directory dstPath of dst in one vfs batch,
// so the import lands whole or not at all, and returns once it survives a
// power loss: the batch's chunks are written without waiting for the disk
// and synced together before its one metadata commit, which Sync then
// makes durable (docs/decisions/021).
func importInto(ctx context.Context, dst *vfs.FS, dstPath string, src source, opts Options) error {
	const op = "import"
	err := dst.Batch(ctx, func(b *vfs.FS) error {
		sink, err := newWSSink(ctx, b, dstPath)
		if err != nil {
			return errorAt(op, dstPath, err)
		}
		return run(ctx, op, src, sink, opts)
	})
	if err != nil {
		return err
	}
	return dst.Sync(ctx)
}

// ImportTar extracts the tar stream r (plain or gzip, detected by its
// magic number) into directory dstPath of dst, created if missing; a "./"
// entry gives dstPath its attributes. Entries
// with absolute names, ".." elements, or hard links to anything but an
// earlier entry are rejected with an error wrapping fs.ErrInvalid, as is
// an entry that would be written through a symbolic link; nothing outside
// dstPath is written. A damaged stream wraps fs.ErrInvalid. Like
// ImportDir it is atomic: when it fails dst is exactly as it was.
func ImportTar(ctx context.Context, dst *vfs.FS, dstPath string, r io.Reader, opts Options) error {
	return importInto(ctx, dst, dstPath, &tarSource{r: r, skip: opts.Skip}, opts)
}

// ExportDir copies srcPath of src (a directory, or a single file written
// under its base name) into the host directory dstDir, created if missing
// (and then given srcPath's mode and times). Nothing is written through a
// symbolic link found in dstDir. Owners are set only when running as root.
func ExportDir(ctx context.Context, src *vfs.FS, srcPath, dstDir string, opts Options) error {
	const op = "export"
	s, err := newWSSource(src, srcPath, opts.Skip)
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
	s, err := newWSSource(src, srcPath, opts.Skip)
	if err != nil {
		return errorAt(op, srcPath, err)
	}
	return run(ctx, op, s, newTarSink(w, opts.Gzip), opts)
}
