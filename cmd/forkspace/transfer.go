package main

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/transfer"
	"github.com/forkspace/forkspace/vfs"
)

// summary reports a finished transfer, e.g. "imported 3 entries (1.2 KiB)
// into ws:/dir".
func (a *app) summary(verb, prep string, m *meter, p string) error {
	return a.printSummary(verb, prep, httpapi.TransferSummary{Entries: m.last.Files, Bytes: m.last.Bytes, Path: p})
}

func (a *app) printSummary(verb, prep string, s httpapi.TransferSummary) error {
	if a.json {
		return a.printJSON(s)
	}
	noun := "entries"
	if s.Entries == 1 {
		noun = "entry"
	}
	_, err := fmt.Fprintf(a.stdout, "%s %d %s (%s) %s %s:/%s\n", verb, s.Entries, noun, size(s.Bytes), prep, a.state, strings.TrimPrefix(s.Path, "."))
	return err
}

// options builds transfer options that feed m and warn about skipped
// entries on stderr. Totals are counted only for m's progress bar.
func (a *app) options(m *meter) transfer.Options {
	return transfer.Options{
		Progress: m.update,
		Totals:   m.tty,
		Skip: func(name string, err error) error {
			fmt.Fprintf(a.stderr, "forkspace: skipping %v\n", err)
			return nil
		},
	}
}

func importCmd(a *app) *cobra.Command {
	var to string
	c := &cobra.Command{
		Use:   "import SRC [--to PATH]",
		Short: "Copy a host directory or a tar or zip archive into the workspace",
		Long: "Copy a host directory, a zip archive, or a tar archive (a file, plain or gzip, or '-'\n" +
			"for stdin) into directory PATH of the workspace, preserving modes, times, links and owners\n" +
			"(zip keeps modes, whole-second times and links, not owners). Entries that would land outside\n" +
			"PATH or be written through a symbolic link are refused (exit code 5), and a refused import\n" +
			"changes nothing.",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			ctx := c.Context()
			dst, err := vfs.CleanPath(to)
			if err != nil {
				return err
			}
			if ws, err := a.files(ctx); err != nil || a.remote {
				if err != nil {
					return err
				}
				return a.importRemote(ctx, ws, dst, argv[0])
			}
			f, err := a.view(ctx)
			if err != nil {
				return err
			}
			m := a.meter("import")
			defer m.done()
			opts := a.options(m)
			err = a.audited(ctx, "import", map[string]string{"to": dst}, []string{dst}, func(ctx context.Context) error {
				return importFrom(ctx, f, dst, argv[0], a, opts)
			})
			if err != nil {
				return err
			}
			m.done()
			return a.summary("imported", "into", m, dst)
		},
	}
	c.Flags().StringVar(&to, "to", ".", "workspace directory to import into (created if missing)")
	return c
}

func exportCmd(a *app) *cobra.Command {
	var (
		from string
		gz   bool
	)
	c := &cobra.Command{
		Use:   "export DEST [--from PATH]",
		Short: "Copy the workspace (or a checkpoint) to a host directory or a tar or zip archive",
		Long: "Copy PATH of the workspace (or of a checkpoint, with -w NAME@CHECKPOINT) to a host\n" +
			"directory, to a tar archive when DEST ends in .tar, .tar.gz or .tgz, to a zip archive for\n" +
			".zip, or as a tar stream to stdout for '-'. Other archive endings (.tar.xz, .7z…) are refused.\n" +
			"Symbolic links already in a destination directory are never followed.",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			ctx := c.Context()
			src, err := vfs.CleanPath(from)
			if err != nil {
				return err
			}
			if ws, err := a.files(ctx); err != nil || a.remote {
				if err != nil {
					return err
				}
				return a.exportRemote(ctx, ws, src, argv[0], gz)
			}
			f, err := a.view(ctx)
			if err != nil {
				return err
			}
			m := a.meter("export")
			defer m.done()
			opts := a.options(m)
			dest := argv[0]
			if dest == "-" {
				opts.Gzip = gz
				err = transfer.ExportTar(ctx, f, src, a.stdout, opts)
			} else {
				err = exportTo(ctx, f, src, dest, gz, opts)
			}
			if err != nil {
				return err
			}
			m.done()
			if dest == "-" {
				return nil
			}
			return a.summary("exported", "from", m, src)
		},
	}
	c.Flags().StringVar(&from, "from", ".", "workspace path to export")
	c.Flags().BoolVarP(&gz, "gzip", "z", false, "gzip the tar output (implied by .tar.gz and .tgz)")
	return c
}

// importFrom picks the importer for src: stdin ("-") and regular files are
// tar archives, directories are copied.
func importFrom(ctx context.Context, f *vfs.FS, dst, src string, a *app, opts transfer.Options) error {
	if src == "-" {
		return transfer.ImportTar(ctx, f, dst, a.stdin, opts)
	}
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return transfer.ImportDir(ctx, f, dst, src, opts)
	}
	r, err := os.Open(src)
	if err != nil {
		return err
	}
	defer r.Close()
	magic := make([]byte, 4)
	if n, _ := r.ReadAt(magic, 0); transfer.IsZip(magic[:n]) {
		return transfer.ImportZip(ctx, f, dst, r, fi.Size(), opts)
	}
	return transfer.ImportTar(ctx, f, dst, r, opts)
}

// exportTo writes src to dest in the format its name asks for: a tar or
// zip archive (removed again on failure), or a directory. A name ending
// like an archive this CLI cannot write is refused before anything is
// read or written.
func exportTo(ctx context.Context, f *vfs.FS, src, dest string, gz bool, opts transfer.Options) error {
	format, gzipped, err := transfer.ArchiveFormat(dest)
	if err != nil {
		return fmt.Errorf("export to %s: %w", dest, err)
	}
	if format == transfer.FormatDir {
		return transfer.ExportDir(ctx, f, src, dest, opts)
	}
	w, err := os.Create(dest)
	if err != nil {
		return err
	}
	if format == transfer.FormatZip {
		err = transfer.ExportZip(ctx, f, src, w, opts)
	} else {
		opts.Gzip = gz || gzipped
		err = transfer.ExportTar(ctx, f, src, w, opts)
	}
	if err = errors.Join(err, w.Close()); err != nil {
		os.Remove(dest)
	}
	return err
}

// importRemote imports a tar archive (a file or stdin) through a server;
// the server cannot read this host's directories.
func (a *app) importRemote(ctx context.Context, ws, dst, src string) error {
	r := a.stdin
	if src != "-" {
		fi, err := os.Stat(src)
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return fmt.Errorf("import %s through a server: %w: send a tar archive instead (tar -C %s -c . | forkspace import -)", src, errors.ErrUnsupported, src)
		}
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	s, err := a.backend.ImportTar(ctx, ws, dst, r)
	if err != nil {
		return err
	}
	return a.printSummary("imported", "into", s)
}

// exportRemote exports as a tar stream (to stdout or a .tar, .tar.gz or
// .tgz file) through a server.
func (a *app) exportRemote(ctx context.Context, ws, src, dest string, gz bool) error {
	w := a.stdout
	if dest != "-" {
		format, gzipped, err := transfer.ArchiveFormat(dest)
		if err != nil {
			return fmt.Errorf("export to %s: %w", dest, err)
		}
		if format != transfer.FormatTar {
			return fmt.Errorf("export to %s through a server: %w: export to a .tar, .tar.gz or .tgz file or to -", dest, errors.ErrUnsupported)
		}
		gz = gz || gzipped
		f, err := os.Create(dest)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	out := w
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(w)
		out = zw
	}
	s, err := a.backend.ExportTar(ctx, ws, src, out)
	if err == nil && zw != nil {
		err = zw.Close()
	}
	if err != nil {
		if dest != "-" {
			os.Remove(dest)
		}
		return err
	}
	if dest == "-" {
		return nil
	}
	return a.printSummary("exported", "from", s)
}
