package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/httpapi"
)

func lsCmd(a *app) *cobra.Command {
	var long bool
	c := &cobra.Command{
		Use:   "ls [-l] [PATH]",
		Short: "List a directory of the workspace (or describe one file)",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			p := "."
			if len(argv) == 1 {
				p = argv[0]
			}
			return a.ls(c.Context(), p, long)
		},
	}
	c.Flags().BoolVarP(&long, "long", "l", false, "long format: mode, links, owner, size, mtime")
	return c
}

func (a *app) ls(ctx context.Context, arg string, long bool) error {
	ws, err := a.files(ctx)
	if err != nil {
		return err
	}
	api := a.backend
	var entries []httpapi.Entry
	for cur := ""; ; {
		p, err := api.ReadDir(ctx, ws, arg, httpapi.PageRequest{Cursor: cur, Limit: httpapi.MaxLimit})
		if errors.Is(err, errdefs.ErrNotDir) {
			// A file (or a link to one) is described itself.
			e, err := api.Stat(ctx, ws, arg)
			if err != nil {
				return err
			}
			entries = []httpapi.Entry{e}
			break
		}
		if err != nil {
			return err
		}
		entries = append(entries, p.Entries...)
		if cur = p.Next; cur == "" {
			break
		}
	}
	if entries == nil {
		entries = []httpapi.Entry{}
	}
	if a.json {
		return a.printJSON(entries)
	}
	if !long {
		for _, e := range entries {
			suffix := ""
			if e.Type == "dir" {
				suffix = "/"
			}
			fmt.Fprintf(a.stdout, "%s%s\n", e.Name, suffix)
		}
		return nil
	}
	tw := table(a.stdout)
	for _, e := range entries {
		name := e.Name
		if e.Target != "" {
			name += " -> " + e.Target
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\n", modeString(e.FileMode()), e.Nlink, e.UID, e.GID, size(e.Size), when(e.Mtime), name)
	}
	return tw.Flush()
}

func statCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "stat PATH",
		Short: "Show the attributes of one entry (not following a final link)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			ctx := c.Context()
			ws, err := a.files(ctx)
			if err != nil {
				return err
			}
			e, err := a.backend.Stat(ctx, ws, argv[0])
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(e)
			}
			tw := table(a.stdout)
			fmt.Fprintf(tw, "path:\t%s\n", e.Path)
			fmt.Fprintf(tw, "type:\t%s\n", e.Type)
			if e.Target != "" {
				fmt.Fprintf(tw, "target:\t%s\n", e.Target)
			}
			fmt.Fprintf(tw, "size:\t%d (%s)\n", e.Size, size(e.Size))
			fmt.Fprintf(tw, "mode:\t%s (%s)\n", e.Mode, modeString(e.FileMode()))
			fmt.Fprintf(tw, "inode:\t%d\n", e.Ino)
			fmt.Fprintf(tw, "links:\t%d\n", e.Nlink)
			fmt.Fprintf(tw, "owner:\t%d:%d\n", e.UID, e.GID)
			fmt.Fprintf(tw, "modified:\t%s\n", e.Mtime.Local().Format("2006-01-02 15:04:05.000000000 -0700"))
			fmt.Fprintf(tw, "accessed:\t%s\n", e.Atime.Local().Format("2006-01-02 15:04:05.000000000 -0700"))
			fmt.Fprintf(tw, "changed:\t%s\n", e.Ctime.Local().Format("2006-01-02 15:04:05.000000000 -0700"))
			return tw.Flush()
		},
	}
}
