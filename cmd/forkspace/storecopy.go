package main

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/blob/fileblob"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
	"github.com/forkspace/forkspace/storecopy"
)

func storeCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "store",
		Short: "Act on a whole store: copy it to other drivers, salvage a damaged one",
	}
	c.AddCommand(storeCopyCmd(a))
	return c
}

func storeCopyCmd(a *app) *cobra.Command {
	var (
		salvage  bool
		parallel int
	)
	c := &cobra.Command{
		Use:   "copy SRC DST",
		Short: "Copy a whole store (metadata and blobs) to other drivers, verified object by object",
		Long: "store copy copies every workspace, checkpoint, staged change, history step, audit\n" +
			"entry, token, tree node, inline body and blob of the store SRC into DST, then reads\n" +
			"DST back: every object hashed, every metadata table compared (rows and digest).\n" +
			"A store is named by a spec, comma-separated:\n\n" +
			"  DIR                          a store directory (DIR/meta.db, DIR/blobs/)\n" +
			"  DIR,blob=s3://B/P?…          meta.db in DIR, blobs in a bucket\n" +
			"  meta=postgres://…,blob=URL   PostgreSQL and a bucket (or file:///DIR)\n\n" +
			"Credentials come from the environment (PGPASSWORD, AWS_*); a spec holding one is\n" +
			"refused. DST must be empty (exit 10 otherwise, nothing changed); an interrupted\n" +
			"copy is completed by running the same command again. Both stores are locked\n" +
			"while it runs. With --salvage, a damaged SRC gives up what can still be read and\n" +
			"the command names what is lost, exiting with status 12.",
		Example: "  forkspace store copy ./.forkspace 'meta=postgres:///fs?host=/run/postgresql,blob=s3://bucket/fs?endpoint=http://127.0.0.1:9000'\n" +
			"  forkspace store copy --salvage ./damaged ./rescued --json",
		Args: args(cobra.ExactArgs(2)),
		RunE: func(c *cobra.Command, argv []string) error {
			ctx := c.Context()
			log := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			src, err := a.openSpec(ctx, log, argv[0], false)
			if err != nil {
				return err
			}
			defer src.close()
			dst, err := a.openSpec(ctx, log, argv[1], true)
			if err != nil {
				return err
			}
			defer dst.close()
			m := a.phaseMeter()
			r, err := storecopy.Copy(ctx, src.Side, dst.Side, storecopy.Options{
				Salvage: salvage, Parallel: parallel,
				Progress: func(p storecopy.Progress) { m.update(p.Phase, p.Done, p.Total) },
			})
			m.done()
			if r == nil {
				return err
			}
			if a.json {
				if err := a.printJSON(r); err != nil {
					return err
				}
			} else {
				a.printCopy(r)
			}
			return err
		},
	}
	c.Flags().BoolVar(&salvage, "salvage", false, "copy what a damaged SRC still yields and name what is lost (exit 12 if anything is)")
	c.Flags().IntVar(&parallel, "parallel", 8, "blobs copied at once")
	return c
}

// printCopy prints a copy's report for people.
func (a *app) printCopy(r *storecopy.Report) {
	w := table(a.stdout)
	fmt.Fprintf(w, "table\trows\tdigest\n")
	for _, name := range slices.Sorted(maps.Keys(r.Tables)) {
		t := r.Tables[name]
		fmt.Fprintf(w, "%s\t%d\t%.16s\n", name, t.Rows, t.Digest)
	}
	w.Flush()
	state := "not verified"
	if r.Verified {
		state = "verified"
	}
	resumed := ""
	if r.Resumed {
		resumed = " (completing an interrupted copy)"
	}
	fmt.Fprintf(a.stdout, "copied %s to %s%s: %d blobs, %d bytes; %s\n", r.From, r.To, resumed, r.Blobs, r.BlobBytes, state)
	for _, l := range r.Lost {
		fmt.Fprintf(a.stdout, "lost %s %s: %s\n", l.Kind, l.Name, l.Error)
	}
}

// specSide is one opened end of a store copy and what to release.
type specSide struct {
	storecopy.Side
	lock *os.File
}

func (s *specSide) close() {
	if s.Meta != nil {
		s.Meta.Close()
	}
	if s.Blobs != nil {
		s.Blobs.Close()
	}
	if s.lock != nil {
		s.lock.Close()
	}
}

// openSpec opens the store a copy spec names ([DIR][,meta=URL][,blob=URL]:
// the directory holds whatever meta= and blob= do not say), locked for
// the copy: the directory's lock file, PostgreSQL's owner lock. A
// destination directory is created.
func (a *app) openSpec(ctx context.Context, log *slog.Logger, spec string, create bool) (_ *specSide, err error) {
	var dir, metaURL, blobURL string
	for _, part := range strings.Split(spec, ",") {
		switch k, v, _ := strings.Cut(part, "="); {
		case k == "meta" && v != "":
			metaURL = v
		case k == "blob" && v != "":
			blobURL = v
		case !strings.Contains(part, "=") && dir == "" && part != "":
			dir = part
		default:
			return nil, usage("store spec %q: want DIR, DIR,blob=URL or meta=URL,blob=URL", spec)
		}
	}
	if dir == "" && (metaURL == "" || blobURL == "") {
		return nil, usage("store spec %q: name a directory, or both meta= and blob=", spec)
	}
	s := &specSide{}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if dir != "" {
		if dir, err = filepath.Abs(dir); err != nil {
			return nil, err
		}
		if !create && metaURL == "" {
			if _, err := os.Stat(filepath.Join(dir, "meta.db")); err != nil {
				return nil, &fs.PathError{Op: "store copy", Path: dir, Err: fmt.Errorf("%w: no store here", fs.ErrNotExist)}
			}
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		if s.lock, err = lockStore(dir); err != nil {
			return nil, err
		}
	}
	sub := &app{metaURL: metaURL, blobURL: blobURL, stderr: a.stderr}
	if s.Meta, err = sub.metaStore(ctx, log, false); err != nil { // exclusive: nothing else writes a store being copied
		return nil, err
	}
	if s.Meta == nil {
		if s.Meta, err = sqlitemeta.Open(ctx, filepath.Join(dir, "meta.db"), sqlitemeta.Options{Logger: log}); err != nil {
			return nil, fmt.Errorf("open %s: %w", dir, err)
		}
	}
	if s.Blobs, err = sub.blobStore(); err != nil {
		return nil, err
	}
	switch {
	case s.Blobs == nil:
		if s.Blobs, err = fileblob.Open(filepath.Join(dir, "blobs")); err != nil {
			return nil, err
		}
		s.BlobLocation = "local"
	default:
		if l, ok := s.Blobs.(blob.Locator); ok {
			s.BlobLocation = l.Location()
		}
	}
	s.Name = spec
	if dir != "" && metaURL == "" && blobURL == "" {
		s.Name = dir
	}
	return s, nil
}

// lockStore takes the store directory's lock as an open store does, so
// no process writes the store while it is copied.
func lockStore(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("store copy %s: %w: in use by another process", dir, errdefs.ErrBusy)
	}
	return f, nil
}
