package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/fusefs"
)

// fuseFlags are the mount options of 'fuse mount' and 'serve --fuse'.
type fuseFlags struct {
	readOnly, allowOther, debug bool
	uid, gid                    uint32
	cache                       time.Duration
}

func (f *fuseFlags) add(c *cobra.Command, prefix string) {
	fl := c.Flags()
	fl.BoolVar(&f.readOnly, prefix+"read-only", false, "mount read-only (every write fails with EROFS)")
	fl.BoolVar(&f.allowOther, prefix+"allow-other", false, "let other users reach the mount (user_allow_other in /etc/fuse.conf unless root)")
	fl.Uint32Var(&f.uid, prefix+"uid", 0, "show files the workspace owns as uid 0 as owned by this uid (and the other way round)")
	fl.Uint32Var(&f.gid, prefix+"gid", 0, "likewise for the group")
	fl.DurationVar(&f.cache, prefix+"cache-timeout", 0, "how long the kernel may cache names and attributes (default 5s; other surfaces' changes invalidate them at once)")
	fl.BoolVar(&f.debug, prefix+"fuse-debug", false, "log every FUSE request to stderr")
}

func (f *fuseFlags) options() fusefs.Options {
	return fusefs.Options{ReadOnly: f.readOnly, AllowOther: f.allowOther, UID: f.uid, GID: f.gid, CacheTimeout: f.cache, Debug: f.debug}
}

func fuseCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "fuse",
		Short: "Mount workspaces and checkpoints as directories (FUSE)",
	}
	c.AddCommand(fuseMountCmd(a), fuseUmountCmd(a))
	return c
}

func fuseMountCmd(a *app) *cobra.Command {
	var f fuseFlags
	c := &cobra.Command{
		Use:   "mount WORKSPACE[@CHECKPOINT] DIR",
		Short: "Mount a workspace (read-write) or a checkpoint (read-only) at DIR, in the foreground",
		Long: "Mount a workspace at DIR, an empty directory, and serve it until interrupted (Ctrl-C,\n" +
			"SIGTERM) or unmounted ('forkspace fuse umount DIR'). A checkpoint mounts read-only.\n" +
			"close(2) and fsync(2) on the mount are durable: when they return, the data is in the store\n" +
			"and visible to every other surface; changes made elsewhere show on the mount at once.\n" +
			"Every checkpoint of a mounted workspace is readable at DIR/.forkspace/checkpoints/LABEL/\n" +
			"(not listed in DIR). The store stays open (and locked) while mounted; 'forkspace serve --fuse DIR' mounts every\n" +
			"workspace beside the server instead.",
		Example: "  forkspace fuse mount agent-1 /mnt/agent-1\n" +
			"  forkspace fuse mount agent-1@before-refactor /mnt/before --allow-other",
		Args: args(cobra.ExactArgs(2)),
		RunE: func(c *cobra.Command, argv []string) error {
			ctx := c.Context()
			fsys, err := a.viewOf(ctx, argv[0])
			if err != nil {
				return err
			}
			opts := f.options()
			if !fsys.ReadOnly() {
				w, err := a.st.Workspace(ctx, argv[0])
				if err != nil {
					return err
				}
				opts.Checkpoints = fusefs.WorkspaceCheckpoints{W: w}
			}
			srv, err := fusefs.Mount(ctx, argv[1], fsys, opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "forkspace: mounted %s at %s (Ctrl-C or 'forkspace fuse umount %s' to unmount)\n", argv[0], srv.Dir(), srv.Dir())
			return serveMount(ctx, srv)
		},
	}
	f.add(c, "")
	return c
}

// serveMount waits until ctx ends (an interrupt) or the mount goes away
// from outside, then unmounts.
func serveMount(ctx context.Context, srv *fusefs.Server) error {
	gone := make(chan struct{})
	go func() {
		srv.Wait()
		close(gone)
	}()
	select {
	case <-ctx.Done():
	case <-gone:
	}
	return srv.Unmount()
}

func fuseUmountCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "umount DIR",
		Short: "Unmount a FUSE mount (lazily), also after its daemon was killed",
		Long: "Detach the FUSE mount at DIR at once (files still open keep it until they close), whether\n" +
			"its forkspace process is running or was killed: no \"transport endpoint is not connected\"\n" +
			"is left behind. DIR that is not a mount point exits 5.",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			return fusefs.Unmount(argv[0])
		},
	}
}

// mountAll mounts every workspace of the open store at dir/<name>/ (serve
// --fuse) and returns its unmount.
func (a *app) mountAll(ctx context.Context, dir string, f *fuseFlags) (func(), error) {
	srv, err := fusefs.MountAll(ctx, dir, fusefs.StoreWorkspaces{Store: a.st}, f.options())
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(a.stderr, "forkspace: workspaces mounted at %s/<name>\n", srv.Dir())
	return func() {
		if err := srv.Unmount(); err != nil {
			fmt.Fprintf(a.stderr, "forkspace: warning: %v\n", err)
		}
	}, nil
}
