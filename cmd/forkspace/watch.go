package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/httpapi"
)

func watchCmd(a *app) *cobra.Command {
	var (
		since int64
		count int
		all   bool
	)
	cmd := &cobra.Command{
		Use:   "watch WORKSPACE [PATH]",
		Short: "Print a workspace's changes as they happen (the change feed)",
		Long: "Print the changes of a workspace (with PATH: those that touch it, beneath it or above it),\n" +
			"one line each, as they are made through any door: REST, the CLI, MCP, exec, FUSE, WebDAV,\n" +
			"S3, mounts. Each has the store-wide sequence number; --since SEQ starts after it (0: from\n" +
			"the start of the log), so a watch can resume where another stopped. --all watches every\n" +
			"workspace. With --json each change is one JSON object per line (the REST events' data).\n" +
			"Live changes come through a running server; without one, watch prints the changes after\n" +
			"--since and exits (it must not hold the store, which a server would need).",
		Example: "  forkspace watch agent-1\n  forkspace watch agent-1 src --json\n  forkspace watch --all --since 0 --count 10",
		Args:    args(cobra.RangeArgs(0, 2)),
		RunE: func(c *cobra.Command, argv []string) error {
			if all != (len(argv) == 0) {
				return usage("name a workspace, or pass --all (and no workspace)")
			}
			if !c.Flags().Changed("since") {
				since = httpapi.Now
			} else if since < 0 {
				return usage("--since %d: want a sequence number (0 or more)", since)
			}
			ws, p := "", ""
			if len(argv) > 0 {
				ws = argv[0]
			}
			if len(argv) > 1 {
				p = argv[1]
			}
			ctx := c.Context()
			api, err := a.api(ctx)
			if err != nil {
				return err
			}
			s, err := api.Events(ctx, ws, p, since)
			if err != nil {
				return err
			}
			defer s.Close()
			for seen := 0; count == 0 || seen < count; {
				es, err := s.Next(ctx)
				switch {
				case errors.Is(err, io.EOF):
					return nil // no server: the history is all there is
				case errors.Is(err, context.Canceled) && ctx.Err() != nil:
					return nil // interrupted
				case err != nil:
					return err
				}
				for _, e := range es {
					if count > 0 && seen == count {
						break
					}
					if err := a.printEvent(e); err != nil {
						return err
					}
					seen++
				}
			}
			return nil
		},
	}
	cmd.Flags().Int64Var(&since, "since", 0, "start after this sequence number (0: the start of the log; default: now)")
	cmd.Flags().IntVar(&count, "count", 0, "exit after this many changes (0: run until interrupted)")
	cmd.Flags().BoolVar(&all, "all", false, "watch every workspace")
	return cmd
}

// printEvent prints one change: a JSON line, or SEQ TIME WORKSPACE ACTOR
// TOOL OUTCOME CHANGED.
func (a *app) printEvent(e httpapi.Event) error {
	if a.json {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(a.stdout, "%s\n", b)
		return err
	}
	ws := e.Workspace
	if ws == "" {
		ws = e.WorkspaceID
	}
	_, err := fmt.Fprintf(a.stdout, "%d  %s  %s  %s  %s  %s  %s\n", e.Seq, when(e.Time), dash(ws), dash(e.Actor), e.Tool, outcome(e.Error), paths(e.Changed))
	return err
}

// keepAudit prunes the audit log (and so the change feed) of entries
// older than keep, now and then every hour, until ctx ends.
func keepAudit(ctx context.Context, log *audit.Log, keep time.Duration, warn func(error)) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if _, err := log.Prune(ctx, time.Now().Add(-keep)); err != nil && ctx.Err() == nil {
			warn(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
