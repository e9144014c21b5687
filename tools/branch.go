package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"text/tabwriter"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/provider"
)

// Best-of-N: fork with n (snapshot.go), compare, promote.

type compareIn struct {
	States  []string `json:"states" jsonschema:"2 to 16 states to compare: workspace names (e.g. forks made with fork n), NAME@CHECKPOINT, '@CHECKPOINT' for a checkpoint of this workspace, '@parent'"`
	Summary bool     `json:"summary,omitempty" jsonschema:"counts and changed paths only, without text diffs"`
}

type promoteIn struct {
	Winner string `json:"winner" jsonschema:"the fork to keep: a fork of this workspace made with fork n"`
	Head   bool   `json:"head,omitempty" jsonschema:"make the winner's state this workspace's state (dropping what this workspace changed since the fork) instead of merging it in"`
	Policy string `json:"policy,omitempty" jsonschema:"as merge's policy: what to do with conflicts when merging"`
}

func (s *Set) addBranchTools() {
	addStructured(s, readOnly, "compare", "Compare 2 to 16 states pairwise (e.g. the forks of a fork n): how many changes lie "+
		"between each two, and what they are, with text diffs. Pick the best, then promote it.", compareTool)
	addStructured(s, snapshotOp, "promote", "Keep one fork of a fork n: merge it into this workspace (or make it this "+
		"workspace's state) and delete the other forks of the same fork n. A checkpoint of this workspace as it was is "+
		"taken first (restore it to undo).", promoteTool)
}

// brancher returns the workspace's best-of-N module or a tool error.
func (c *call) brancher() (provider.Brancher, error) {
	if b, ok := c.ws.Snapshots().(provider.Brancher); ok {
		return b, nil
	}
	return nil, argError("this workspace does not support forking n ways, compare or promote")
}

func (c *call) forkN(ctx context.Context, in forkIn) (string, error) {
	b, err := c.brancher()
	if err != nil {
		return "", err
	}
	names, err := b.ForkN(ctx, in.N, in.Name)
	if errors.Is(err, fs.ErrInvalid) && in.Name != "" {
		return "", argError("name %q: the forks' names are NAME-K; use letters, digits, '.', '_' or '-'", short(in.Name))
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("forked the current state %d ways: %s. Work in each (a session per fork), compare them with "+
		"compare, keep the best with promote; this session still works in the original", len(names), strings.Join(names, ", ")), nil
}

func compareTool(ctx context.Context, c *call, in compareIn) (string, provider.Comparison, error) {
	b, err := c.brancher()
	if err != nil {
		return "", provider.Comparison{}, err
	}
	if len(in.States) < 2 || len(in.States) > 16 {
		return "", provider.Comparison{}, argError("states: give 2 to 16 states to compare")
	}
	cmp, err := b.Compare(ctx, in.States, !in.Summary)
	switch {
	case errors.Is(err, fs.ErrInvalid):
		return "", cmp, argError("states: each state once, 2 to 16 of them: workspace names, NAME@CHECKPOINT, '@CHECKPOINT' or '@parent'")
	case errors.Is(err, fs.ErrNotExist):
		what, state := "a state does not exist or shares no ancestor with this workspace", ""
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			state = short(pe.Path)
		}
		switch {
		case state != "" && errors.Is(err, forkspace.ErrNoMergeBase):
			what = "state " + state + " shares no ancestor with this workspace"
		case state != "":
			what = "state " + state + " does not exist"
		}
		return "", cmp, argError("%s: name forks of this workspace, its checkpoints ('@CHECKPOINT') or '@parent'", what)
	case err != nil:
		return "", cmp, err
	}
	var t strings.Builder
	t.WriteString("changes between each two states:\n")
	w := tabwriter.NewWriter(&t, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "\t%s\n", strings.Join(shortAll(cmp.States), "\t"))
	for i, row := range cmp.Changes {
		fmt.Fprintf(w, "%s", short(cmp.States[i]))
		for _, n := range row {
			fmt.Fprintf(w, "\t%d", n)
		}
		fmt.Fprintln(w)
	}
	_ = w.Flush()
	cut := false
	for i, p := range cmp.Pairs {
		fmt.Fprintf(&t, "\n%s -> %s: %d changes\n", short(p.From), short(p.To), len(p.Changes))
		for k, e := range p.Changes {
			if t.Len() > maxDiffBytes {
				if !cut {
					fmt.Fprintf(&t, "… cut at %d bytes; compare fewer states, use summary, or diff two of them\n", maxDiffBytes)
				}
				cut = true
				cmp.Pairs[i].Changes[k].Unified = ""
				continue
			}
			writeEntry(&t, e)
			t.WriteString(e.Unified)
		}
	}
	return strings.TrimSuffix(t.String(), "\n"), cmp, nil
}

func promoteTool(ctx context.Context, c *call, in promoteIn) (string, provider.PromoteReport, error) {
	b, err := c.brancher()
	if err != nil {
		return "", provider.PromoteReport{}, err
	}
	if in.Winner == "" {
		return "", provider.PromoteReport{}, argError("winner is required: the name of a fork made with fork n")
	}
	if err := checkPolicy(in.Policy); err != nil {
		return "", provider.PromoteReport{}, err
	}
	if in.Head && in.Policy != "" {
		return "", provider.PromoteReport{}, argError("policy is for merging; with head the winner's state replaces this workspace's")
	}
	r, err := b.Promote(ctx, in.Winner, in.Head, in.Policy)
	stopped := errors.Is(err, errdefs.ErrConflict) && r.Merge != nil && len(r.Merge.Conflicts) > 0
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", r, argError("no workspace %q: name a fork made with fork n", short(in.Winner))
	case errors.Is(err, fs.ErrInvalid):
		return "", r, argError("%s is not a fork of this workspace made with fork n (promote keeps one fork of a fork n; merge other states with merge)", short(in.Winner))
	case err != nil && !stopped:
		return "", r, err
	}
	if r.Deleted == nil {
		r.Deleted = []string{}
	}
	var t strings.Builder
	switch {
	case stopped:
		fmt.Fprintf(&t, "nothing was promoted (policy fail): %d conflicts; no fork was deleted\n", len(r.Merge.Conflicts))
	case r.Head:
		c.changes(".")
		fmt.Fprintf(&t, "this workspace now holds %s's state; checkpoint %s holds the state before (restore it to undo)\n", short(r.Winner), r.Checkpoint)
	default:
		c.changes(r.Merge.Changed...)
		fmt.Fprintf(&t, "merged %s into this workspace: %d paths changed; checkpoint %s holds the state before (restore it to undo)\n", short(r.Winner), len(r.Merge.Changed), r.Checkpoint)
	}
	if len(r.Deleted) > 0 {
		fmt.Fprintf(&t, "deleted the other forks: %s\n", strings.Join(r.Deleted, ", "))
	}
	if r.Merge != nil {
		writeConflicts(&t, r.Merge.Conflicts)
	}
	return strings.TrimSuffix(t.String(), "\n"), r, nil
}

func shortAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = short(s)
	}
	return out
}
