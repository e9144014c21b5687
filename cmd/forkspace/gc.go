package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/httpapi"
)

func gcCmd(a *app) *cobra.Command {
	var (
		dry   bool
		grace time.Duration
	)
	c := &cobra.Command{
		Use:   "gc",
		Short: "Delete data that no workspace, checkpoint or pending write reaches",
		Long: "gc collects garbage: tree nodes, inline bodies and blobs that no workspace head,\n" +
			"checkpoint, staged change or upload in progress reaches, and that have been\n" +
			"stored or last used longer ago than the grace period (database time). It runs\n" +
			"beside other users of the store. --dry-run only reports what it would delete.",
		Example: "  forkspace gc --dry-run\n  forkspace gc --grace 1h --json",
		Args:    args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			if grace < 0 {
				return usage("--grace must not be negative")
			}
			m := a.phaseMeter()
			a.gcProgress = m.update
			api, err := a.api(c.Context())
			if err != nil {
				return err
			}
			// The collection also removes exec's host copies of workspaces
			// nobody ran a command in for sandbox.DefaultIdle.
			out, err := api.GC(c.Context(), httpapi.GCRequest{DryRun: dry, Grace: grace})
			m.done()
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(out)
			}
			verb, got := "reclaimed", out.Reclaimed
			if dry {
				verb, got = "would reclaim", out.Garbage
			}
			fmt.Fprintf(a.stdout, "%s %s\n", verb, countsString(got))
			fmt.Fprintf(a.stdout, "reachable %s\n", countsString(out.Reachable))
			if out.Young.Objects() > 0 {
				fmt.Fprintf(a.stdout, "kept (within %s grace) %s\n", time.Duration(out.GraceSeconds*float64(time.Second)), countsString(out.Young))
			}
			if out.Held.Objects() > 0 {
				fmt.Fprintf(a.stdout, "kept (uploads in progress) %s\n", countsString(out.Held))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&dry, "dry-run", false, "report what would be deleted; delete nothing")
	c.Flags().DurationVar(&grace, "grace", gc.DefaultGrace, "keep garbage younger than this (0: none)")
	return c
}

func fsckCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "fsck",
		Short: "Verify that every reachable node, body and blob exists and matches its hash",
		Long: "fsck reads every tree node, inline body and blob that a workspace, checkpoint or\n" +
			"staged change reaches and verifies it against its content address. It lists\n" +
			"damaged and missing (dangling) objects and counts orphans (garbage). It exits\n" +
			"with status 9 when it finds damage.",
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			api, err := a.api(c.Context())
			if err != nil {
				return err
			}
			start := time.Now()
			r, err := api.Fsck(c.Context())
			if err != nil {
				return err
			}
			if a.json {
				if err := a.printJSON(r); err != nil {
					return err
				}
			} else {
				for _, p := range r.Problems {
					state := "corrupt"
					if p.Missing {
						state = "missing"
					}
					fmt.Fprintf(a.stdout, "%s %s %s: %s\n", state, p.Kind, p.Hash, p.Error)
					for _, f := range p.Files {
						fmt.Fprintf(a.stdout, "  breaks %s\n", f)
					}
				}
				fmt.Fprintf(a.stdout, "checked %s in %s\n", countsString(r.Checked), time.Since(start).Round(time.Millisecond))
				fmt.Fprintf(a.stdout, "orphans %s\n", countsString(r.Orphans))
			}
			if !r.Clean() {
				return fmt.Errorf("fsck: %d damaged or missing objects: %w", len(r.Problems), errdefs.ErrCorrupt)
			}
			return nil
		},
	}
}

func dfCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "df",
		Short: "Show space used: store totals and each workspace's exclusive and shared bytes",
		Long: "df shows the stored objects and bytes of the store (reachable and garbage) and,\n" +
			"per workspace, its logical size, the stored bytes only it reaches (what deleting\n" +
			"it would free) and the stored bytes it shares with other workspaces.",
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			api, err := a.api(c.Context())
			if err != nil {
				return err
			}
			out, err := api.DF(c.Context())
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(out)
			}
			tw := table(a.stdout)
			fmt.Fprintln(tw, "KIND\tSTORED\tREACHABLE\tGARBAGE")
			for _, k := range []struct {
				name string
				n    func(gc.Counts) (int64, int64)
			}{
				{"nodes", func(c gc.Counts) (int64, int64) { return c.Nodes, c.NodeBytes }},
				{"bodies", func(c gc.Counts) (int64, int64) { return c.Bodies, c.BodyBytes }},
				{"blobs", func(c gc.Counts) (int64, int64) { return c.Blobs, c.BlobBytes }},
			} {
				cell := func(c gc.Counts) string { n, b := k.n(c); return fmt.Sprintf("%d (%s)", n, size(b)) }
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.name, cell(out.Stored), cell(out.Reachable), cell(out.Garbage))
			}
			fmt.Fprintf(tw, "total\t%s\t%s\t%s\n", size(out.Stored.Bytes()), size(out.Reachable.Bytes()), size(out.Garbage.Bytes()))
			fmt.Fprintln(tw)
			fmt.Fprintln(tw, "WORKSPACE\tLOGICAL\tEXCLUSIVE\tSHARED")
			for _, w := range out.Workspaces {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", w.Name, size(w.LogicalBytes), size(w.ExclusiveBytes), size(w.SharedBytes))
			}
			return tw.Flush()
		},
	}
}

// countsString summarises counts in one line.
func countsString(c gc.Counts) string {
	return fmt.Sprintf("%d objects, %s (%d nodes, %d inline bodies, %d blobs)",
		c.Objects(), size(c.Bytes()), c.Nodes, c.Bodies, c.Blobs)
}

// phaseMeter draws one progress bar per phase of a long operation on
// stderr, when stderr is a terminal.
type phaseMeter struct {
	w     io.Writer
	tty   bool
	phase string
	bar   *progressbar.ProgressBar
}

func (a *app) phaseMeter() *phaseMeter {
	f, ok := a.stderr.(*os.File)
	return &phaseMeter{w: a.stderr, tty: ok && term.IsTerminal(int(f.Fd()))}
}

func (m *phaseMeter) update(phase string, done, total int64) {
	if !m.tty {
		return
	}
	if phase != m.phase || m.bar == nil {
		m.done()
		m.phase = phase
		if total <= 0 {
			total = -1 // a spinner
		}
		m.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(m.w),
			progressbar.OptionSetDescription(phase),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	_ = m.bar.Set64(done)
}

func (m *phaseMeter) done() {
	if m.bar != nil {
		_ = m.bar.Finish()
		m.bar = nil
	}
}
