package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/forkspace/forkspace/provider"
)

type checkpointIn struct {
	Label string `json:"label,omitempty" jsonschema:"a short description of the state, e.g. 'tests pass'"`
}

type checkpointsIn struct{}

type restoreIn struct {
	Checkpoint string `json:"checkpoint" jsonschema:"ID or label of the checkpoint to go back to; changes made since are discarded"`
}

type diffIn struct {
	From    string `json:"from,omitempty" jsonschema:"checkpoint ID or label to compare from (default: the latest checkpoint), or '@parent': the state this workspace was forked from"`
	To      string `json:"to,omitempty" jsonschema:"checkpoint ID or label to compare to (default: the current state), or '@parent'"`
	Summary bool   `json:"summary,omitempty" jsonschema:"list changed paths only, without text diffs"`
}

// diffOut is the diff tool's structured result.
type diffOut struct {
	From    string               `json:"from" jsonschema:"checkpoint compared from"`
	To      string               `json:"to,omitempty" jsonschema:"checkpoint compared to; empty for the current state"`
	Changes []provider.DiffEntry `json:"changes" jsonschema:"the changes in order: applied one after another to the from state they yield the to state"`
	// UnifiedCut reports that text diffs past maxDiffBytes were left out.
	UnifiedCut bool `json:"unified_cut,omitempty" jsonschema:"text diffs were cut to bound the result; diff a narrower range or read the files"`
}

type forkIn struct {
	Name string `json:"name,omitempty" jsonschema:"name of the new workspace: letters, digits, '.', '_' or '-'; with n, the prefix of the forks' names (default: this workspace's name)"`
	N    int    `json:"n,omitempty" bounds:"0,64" jsonschema:"fork n ways at once (best-of-N): the forks are named NAME-1, NAME-2 … (the smallest free numbers); compare them with the compare tool, keep one with promote"`
}

// Caps of snapshot results: the text of a diff, and the newest
// checkpoints listed.
const (
	maxDiffBytes   = 64 << 10
	maxCheckpoints = 50
)

func (s *Set) addSnapshotTools() {
	add(s, snapshotOp, "checkpoint", "Record the current state of the workspace under a label, to restore or diff against later. "+
		"Cheap at any workspace size.", checkpointTool)
	add(s, readOnly, "checkpoints", "List the workspace's checkpoints, oldest first (the newest 50).", checkpointsTool)
	add(s, mutating, "restore", "Put the workspace back to a checkpoint, discarding every change made since.", restoreTool)
	addStructured(s, readOnly, "diff", "Show what changed between a checkpoint and the current state (or between two checkpoints, "+
		"or, in a fork, since the state it was forked from: from='@parent'), "+
		"with unified diffs of text files. The changes come in order: applied one after another to the first state they "+
		"give the second (deletions first, then renames and new directories, then new files and modifications).", diffTool)
	add(s, snapshotOp, "fork", "Copy the current state into a new, independent workspace (cheap at any size), or with n into n "+
		"workspaces at once to try n approaches (best-of-N). This session keeps working in the current workspace.", forkTool)
}

// snapshots returns the workspace's snapshot module or a tool error.
func (c *call) snapshots() (provider.Snapshots, error) {
	s := c.ws.Snapshots()
	if s == nil {
		return nil, argError("this workspace does not support checkpoints (no snapshot module)")
	}
	return s, nil
}

func checkpointTool(ctx context.Context, c *call, in checkpointIn) (string, error) {
	s, err := c.snapshots()
	if err != nil {
		return "", err
	}
	cp, err := s.Checkpoint(ctx, in.Label)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("checkpoint %s created%s; restore or diff against it by ID or label", cp.ID, labelNote(cp.Label)), nil
}

func labelNote(label string) string {
	if label == "" {
		return ""
	}
	return fmt.Sprintf(" (label %q)", label)
}

func checkpointsTool(ctx context.Context, c *call, _ checkpointsIn) (string, error) {
	s, err := c.snapshots()
	if err != nil {
		return "", err
	}
	cps, err := s.Checkpoints(ctx)
	if err != nil {
		return "", err
	}
	if len(cps) == 0 {
		return "no checkpoints yet; create one with the checkpoint tool", nil
	}
	var b strings.Builder
	if len(cps) > maxCheckpoints {
		fmt.Fprintf(&b, "… %d older checkpoints not shown\n", len(cps)-maxCheckpoints)
		cps = cps[len(cps)-maxCheckpoints:]
	}
	for _, cp := range cps {
		fmt.Fprintf(&b, "%s  %s%s\n", cp.ID, cp.CreatedAt.UTC().Format(time.RFC3339), labelNote(cp.Label))
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func restoreTool(ctx context.Context, c *call, in restoreIn) (string, error) {
	s, err := c.snapshots()
	if err != nil {
		return "", err
	}
	if in.Checkpoint == "" {
		return "", argError("checkpoint is required; list them with the checkpoints tool")
	}
	if err := s.Restore(ctx, in.Checkpoint); err != nil {
		return "", c.snapshotFail(ctx, s, in.Checkpoint, err)
	}
	c.changes(".")
	return "restored the workspace to checkpoint " + in.Checkpoint, nil
}

// snapshotFail phrases a failure naming a checkpoint.
func (c *call) snapshotFail(ctx context.Context, s provider.Snapshots, name string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if stepRef(name) {
		return argError("no step %s in this workspace's kept history; list the steps with the history tool", name)
	}
	cps, lerr := s.Checkpoints(ctx)
	if lerr != nil || len(cps) == 0 {
		return argError("no checkpoint %q (the workspace has no checkpoints)", name)
	}
	var names []string
	for _, cp := range cps[max(0, len(cps)-5):] {
		names = append(names, cp.ID+labelNote(cp.Label))
	}
	return argError("no checkpoint %q; recent checkpoints: %s", name, strings.Join(names, ", "))
}

func diffTool(ctx context.Context, c *call, in diffIn) (string, diffOut, error) {
	s, err := c.snapshots()
	if err != nil {
		return "", diffOut{}, err
	}
	from := in.From
	if from == "" {
		cps, err := s.Checkpoints(ctx)
		if err != nil {
			return "", diffOut{}, err
		}
		if len(cps) == 0 {
			return "", diffOut{}, argError("no checkpoints to compare with; create one with the checkpoint tool, or pass from")
		}
		from = cps[len(cps)-1].ID
	}
	entries, err := s.Diff(ctx, from, in.To, !in.Summary)
	if from == provider.ParentState && in.To == "" && errors.Is(err, fs.ErrNotExist) {
		return "", diffOut{}, argError("this workspace is not a fork (or its parent was deleted): there is no %s to compare with", provider.ParentState)
	}
	if err != nil {
		name := from
		if in.To != "" && !strings.Contains(err.Error(), from) {
			name = in.To
		}
		return "", diffOut{}, c.snapshotFail(ctx, s, name, err)
	}
	out := diffOut{From: from, To: in.To, Changes: entries}
	if out.Changes == nil {
		out.Changes = []provider.DiffEntry{}
	}
	to := in.To
	if to == "" {
		to = "the current state"
	}
	if len(entries) == 0 {
		return fmt.Sprintf("no changes between %s and %s", from, to), out, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d changes from %s to %s:\n", len(entries), from, to)
	for _, e := range entries {
		writeEntry(&b, e)
	}
	for i, e := range entries {
		if e.Unified == "" {
			continue
		}
		if out.UnifiedCut || b.Len()+len(e.Unified) > maxDiffBytes {
			if !out.UnifiedCut {
				fmt.Fprintf(&b, "… text diffs cut at %d bytes; diff a narrower range or read the files", maxDiffBytes)
				out.UnifiedCut = true
			}
			out.Changes[i].Unified = ""
			continue
		}
		b.WriteString(e.Unified)
	}
	return strings.TrimSuffix(b.String(), "\n"), out, nil
}

func forkTool(ctx context.Context, c *call, in forkIn) (string, error) {
	s, err := c.snapshots()
	if err != nil {
		return "", err
	}
	if in.N != 0 {
		return c.forkN(ctx, in)
	}
	if in.Name == "" {
		return "", argError("name is required (or n, to fork n ways)")
	}
	if _, err := s.Fork(ctx, in.Name); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", argError("a workspace named %q already exists; choose another name", in.Name)
		}
		return "", err
	}
	return fmt.Sprintf("forked the current state into workspace %q; this session still works in the original", in.Name), nil
}

// writeEntry writes one line naming a diff entry.
func writeEntry(b *strings.Builder, e provider.DiffEntry) {
	switch {
	case e.OldPath != "":
		fmt.Fprintf(b, "%s %s -> %s\n", e.Op, e.OldPath, e.Path)
	case e.Link != "":
		fmt.Fprintf(b, "%s %s (hard link of %s)\n", e.Op, e.Path, e.Link)
	case e.Replaced:
		fmt.Fprintf(b, "%s %s (replaced)\n", e.Op, e.Path)
	default:
		fmt.Fprintf(b, "%s %s\n", e.Op, e.Path)
	}
}
