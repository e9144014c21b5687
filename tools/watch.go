package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/forkspace/forkspace/feed"
)

// The watch tool: wait for changes to the workspace (the change feed).

type watchIn struct {
	Path           string `json:"path,omitempty" jsonschema:"the workspace path to watch (default the whole workspace): changes to it, beneath it, or to a directory above it"`
	Since          *int64 `json:"since,omitempty" jsonschema:"continue after this sequence number (the since of a previous watch result), so no change between two watches is missed; default: changes from now on"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" bounds:"0,300" jsonschema:"wait at most this many seconds for a change (default 30, at most 300)"`
}

// WatchResult is the structured result of watch.
type WatchResult struct {
	Changes []WatchChange `json:"changes"`
	// Since is what to pass as since to the next watch.
	Since    int64 `json:"since"`
	TimedOut bool  `json:"timed_out,omitempty"`
}

// WatchChange is one change: a call that changed paths.
type WatchChange struct {
	Seq     int64    `json:"seq"`
	Tool    string   `json:"tool"`
	Actor   string   `json:"actor,omitempty"`
	Changed []string `json:"changed"`
}

// addWatch registers watch when the set has a feed.
func (s *Set) addWatch() {
	if s.opts.Feed == nil {
		return
	}
	addStructured(s, readOnly, "watch", "Wait until something changes files of this workspace under path (through any "+
		"door: other agents, people, exec, mounts), at most timeout_seconds, and return what changed, with the "+
		"sequence number to pass as since next time so nothing is missed.", watchTool)
}

func watchTool(ctx context.Context, c *call, in watchIn) (string, WatchResult, error) {
	p, err := clean(in.Path)
	if err != nil {
		return "", WatchResult{}, err
	}
	f := c.set.opts.Feed
	since := f.Last()
	if in.Since != nil {
		if since = *in.Since; since < 0 {
			return "", WatchResult{}, argError("since %d: want a sequence number from a previous watch (0 or more)", since)
		}
	}
	cur, err := f.Subscribe(ctx, since, feed.Filter{WorkspaceID: c.ws.ID(), Path: p,
		Match: func(e feed.Event) bool { return len(e.Changed) > 0 }})
	if errors.Is(err, feed.ErrTooOld) {
		return "", WatchResult{}, argError("since %d is not in the change feed (older than it keeps, or from the future): call watch without since, and look at the files again", since)
	}
	if err != nil {
		return "", WatchResult{}, err
	}
	wait, cancel := context.WithTimeout(ctx, time.Duration(cmp0(in.TimeoutSeconds, 30))*time.Second)
	defer cancel()
	es, err := cur.Next(wait)
	res := WatchResult{Changes: []WatchChange{}, Since: cur.Seq()}
	switch {
	case ctx.Err() != nil:
		return "", res, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		res.TimedOut = true
		return fmt.Sprintf("no change under %s in %d s (pass since=%d to continue without missing any)", p, cmp0(in.TimeoutSeconds, 30), res.Since), res, nil
	case err != nil:
		return "", res, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d change(s) under %s (pass since=%d to the next watch):", len(es), p, res.Since)
	for _, e := range es {
		res.Changes = append(res.Changes, WatchChange{Seq: e.Seq, Tool: e.Tool, Actor: e.Actor, Changed: e.Changed})
		fmt.Fprintf(&b, "\n#%d %s", e.Seq, e.Tool)
		if e.Actor != "" {
			fmt.Fprintf(&b, " by %s", e.Actor)
		}
		fmt.Fprintf(&b, ": %s", strings.Join(e.Changed, ", "))
	}
	return b.String(), res, nil
}
