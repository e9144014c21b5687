package main

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/bundlemount"
	"github.com/forkspace/forkspace/mount/devmount"
	"github.com/forkspace/forkspace/mount/gitmount"
	"github.com/forkspace/forkspace/mount/hostmount"
	"github.com/forkspace/forkspace/mount/s3mount"
)

// mountDrivers are the built-in mount URL schemes.
func mountDrivers() mount.Drivers {
	d := mount.Drivers{
		s3mount.Scheme: s3mount.New,
		"file":         hostmount.Driver,
		"dev":          devmount.Driver,
		"bundle":       bundlemount.Driver,
		"bundle+http":  bundlemount.Driver,
		"bundle+https": bundlemount.Driver,
	}
	for _, s := range gitmount.Schemes {
		d[s] = gitmount.New
	}
	return d
}

// parseMounts parses --mount ROOT=URL flags.
func parseMounts(args []string) ([]mount.Spec, error) {
	specs := make([]mount.Spec, 0, len(args))
	for _, a := range args {
		s, err := mount.ParseSpec(a, mountDrivers())
		if err != nil {
			return nil, err
		}
		specs = append(specs, s)
	}
	return specs, nil
}

func mountCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "mount",
		Short: "List the workspace's mounts and flush, refresh or prefetch them",
		Long: "Mounts are declared at creation (forkspace workspace create NAME --mount /ROOT=URL).\n" +
			"URL schemes: " + strings.Join(knownSchemes(), ", ") + "; query options mode=ro|rw,\n" +
			"writeback=debounce|manual, writebackms=N, maxbytes=N, maxentries=N, ignore=a,b.",
	}
	c.AddCommand(mountLsCmd(a),
		mountActionCmd(a, httpapi.MountFlush, "Write pending changes under ROOT (every mount if omitted) back to the source"),
		mountActionCmd(a, httpapi.MountRefresh, "Re-list ROOT's source (every mount if omitted) and apply upstream changes"),
		mountActionCmd(a, httpapi.MountPrefetch, "Fetch every not-yet-read file under ROOT (every mount if omitted)"),
		mountConflictsCmd(a), mountResolveCmd(a),
	)
	return c
}

// mountConflictsCmd lists the paths whose write-back hit an upstream
// change.
func mountConflictsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "conflicts",
		Short: "List paths whose write-back conflicts with an upstream change (exit 11 when any)",
		Args:  args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			ws, err := a.liveWorkspace(c)
			if err != nil {
				return err
			}
			ms, err := a.backend.Mounts(c.Context(), ws)
			if err != nil {
				return err
			}
			var paths []string
			for _, m := range ms {
				for _, rel := range m.Conflicts {
					paths = append(paths, path.Join(m.Root, rel))
				}
			}
			if a.json {
				if err := a.printJSON(paths); err != nil {
					return err
				}
			} else {
				for _, p := range paths {
					fmt.Fprintln(a.stdout, p)
				}
			}
			if len(paths) > 0 {
				return fmt.Errorf("%d write-back conflicts (resolve with 'mount resolve PATH --keep-local|--take-upstream'): %w", len(paths), errdefs.ErrConflict)
			}
			return nil
		},
	}
}

// mountResolveCmd settles a conflict.
func mountResolveCmd(a *app) *cobra.Command {
	var keep, take bool
	c := &cobra.Command{
		Use:   "resolve PATH (--keep-local | --take-upstream)",
		Short: "Settle a write-back conflict: force-push the local version, or take the upstream one",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			if keep == take {
				return usage("give exactly one of --keep-local and --take-upstream")
			}
			ws, err := a.liveWorkspace(c)
			if err != nil {
				return err
			}
			return a.backend.ResolveMount(c.Context(), ws, argv[0], keep)
		},
	}
	c.Flags().BoolVar(&keep, "keep-local", false, "write the workspace's version to the source, whatever it holds")
	c.Flags().BoolVar(&take, "take-upstream", false, "drop the local change and take the source's version")
	return c
}

func knownSchemes() []string { return slices.Sorted(maps.Keys(mountDrivers())) }

// liveWorkspace returns the -w workspace with the backend ready (a
// checkpoint is refused: mounts act on the live head).
func (a *app) liveWorkspace(c *cobra.Command) (string, error) {
	ws, cp, err := a.target()
	if err != nil {
		return "", err
	}
	if cp != "" {
		return "", usage("mounts act on the live workspace, not a checkpoint")
	}
	if _, err := a.api(c.Context()); err != nil {
		return "", err
	}
	return ws, nil
}

func mountLsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the workspace's mounts",
		Args:    args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			ws, err := a.liveWorkspace(c)
			if err != nil {
				return err
			}
			ms, err := a.backend.Mounts(c.Context(), ws)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(ms)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ROOT\tMODE\tWRITEBACK\tPENDING\tSOURCE")
			for _, m := range ms {
				src := m.Source
				if src == "" {
					src = "(in code)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", m.Root, m.Options.Mode, m.Options.WriteBack, len(m.Pending), src)
			}
			return tw.Flush()
		},
	}
}

func mountActionCmd(a *app, action httpapi.MountAction, short string) *cobra.Command {
	return &cobra.Command{
		Use:   string(action) + " [ROOT]",
		Short: short,
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			ws, err := a.liveWorkspace(c)
			if err != nil {
				return err
			}
			root := ""
			if len(argv) == 1 {
				root = argv[0]
			}
			if err := a.backend.MountAction(c.Context(), ws, action, root); err != nil {
				return err
			}
			if a.json {
				return a.printJSON(map[string]string{"workspace": ws, "root": root, "done": string(action)})
			}
			return nil
		},
	}
}
