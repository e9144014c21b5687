package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/provider"
)

type mergeIn struct {
	From   string `json:"from" jsonschema:"the state to merge in: another workspace's name (e.g. a fork made with the fork tool), NAME@CHECKPOINT, '@CHECKPOINT' for a checkpoint of this workspace, or '@parent' for the state this workspace was forked from"`
	Policy string `json:"policy,omitempty" jsonschema:"what to do with conflicts: empty records them (resolve each with the resolve tool), 'fail' merges nothing if there is any, 'ours' or 'theirs' settles every one with that side"`
}

type conflictsIn struct{}

type resolveIn struct {
	Path    string `json:"path" jsonschema:"the conflicting path, as the conflicts tool lists it"`
	Take    string `json:"take" jsonschema:"'ours' (this workspace's version from before the merge), 'theirs' (the merged state's), 'markers' (the text with conflict markers, to edit), or 'content' (the content argument)"`
	Content string `json:"content,omitempty" jsonschema:"the file's new content, with take='content'"`
}

type cherryPickIn struct {
	From    string   `json:"from" jsonschema:"the state to take paths from (as merge's from)"`
	Paths   []string `json:"paths" jsonschema:"paths to bring over; each becomes what it is in from (a directory with everything beneath it; removed if from lacks it)"`
	Changes bool     `json:"changes,omitempty" jsonschema:"bring only the changes from made under the paths since the common ancestor, merged with this workspace's (conflicts as with merge)"`
	Policy  string   `json:"policy,omitempty" jsonschema:"with changes: as merge's policy"`
}

// conflictsOut is the conflicts tool's structured result.
type conflictsOut struct {
	Conflicts []provider.Conflict `json:"conflicts" jsonschema:"the unresolved conflicts, by path"`
}

func (s *Set) addMergeTools() {
	addStructured(s, snapshotOp, "merge", "Merge another state into this workspace, three-way from their common ancestor: "+
		"changes on one side apply, text files changed on both sides merge line by line, renames carry changes along. "+
		"A checkpoint of the workspace as it was is taken in the same step (restore it to undo). Conflicts are listed, "+
		"each with its path, kind and next step.", mergeTool)
	addStructured(s, readOnly, "conflicts", "List this workspace's unresolved merge conflicts: path, kind, what each side did.", conflictsTool)
	add(s, mutating, "resolve", "Settle one merge conflict: take ours, theirs, the text with conflict markers to edit, "+
		"or given content. Resolving the last conflict completes the merge.", resolveTool)
	addStructured(s, snapshotOp, "cherry_pick", "Bring chosen paths of another state into this workspace (as they are there, "+
		"or with changes=true only the changes made under them, merged). A checkpoint of the state before is taken in the same step.", cherryPickTool)
}

// merger returns the workspace's merge module or a tool error.
func (c *call) merger() (provider.Merger, error) {
	if m, ok := c.ws.Snapshots().(provider.Merger); ok {
		return m, nil
	}
	return nil, argError("this workspace does not support merges")
}

func checkPolicy(p string) error {
	switch p {
	case "", "fail", "ours", "theirs":
		return nil
	}
	return argError("policy %q: use '' (record conflicts), 'fail', 'ours' or 'theirs'", p)
}

func mergeTool(ctx context.Context, c *call, in mergeIn) (string, provider.MergeReport, error) {
	m, err := c.merger()
	if err != nil {
		return "", provider.MergeReport{}, err
	}
	if in.From == "" {
		return "", provider.MergeReport{}, argError("from is required: a workspace name, NAME@CHECKPOINT, '@CHECKPOINT' or '@parent'")
	}
	if err := checkPolicy(in.Policy); err != nil {
		return "", provider.MergeReport{}, err
	}
	r, err := m.Merge(ctx, in.From, in.Policy)
	return c.reportMerge("merged", in.From, r, err)
}

func cherryPickTool(ctx context.Context, c *call, in cherryPickIn) (string, provider.MergeReport, error) {
	m, err := c.merger()
	if err != nil {
		return "", provider.MergeReport{}, err
	}
	if in.From == "" || len(in.Paths) == 0 {
		return "", provider.MergeReport{}, argError("from and paths are required")
	}
	if err := checkPolicy(in.Policy); err != nil {
		return "", provider.MergeReport{}, err
	}
	paths := make([]string, len(in.Paths))
	for i, p := range in.Paths {
		if paths[i], err = clean(p); err != nil {
			return "", provider.MergeReport{}, err
		}
	}
	r, err := m.CherryPick(ctx, in.From, paths, in.Changes, in.Policy)
	return c.reportMerge("picked", in.From, r, err)
}

// reportMerge phrases a merge's or cherry-pick's outcome for the model.
func (c *call) reportMerge(verb, from string, r provider.MergeReport, err error) (string, provider.MergeReport, error) {
	stopped := errors.Is(err, errdefs.ErrConflict) && len(r.Conflicts) > 0
	switch {
	case errors.Is(err, forkspace.ErrNoMergeBase):
		return "", r, argError("no common ancestor of this workspace and %s is recorded (they are not forks of one workspace, or the fork is older than merge support); cherry_pick needs one too", from)
	case errors.As(err, new(*fs.PathError)) && errors.Is(err, fs.ErrNotExist):
		var pe *fs.PathError
		errors.As(err, &pe)
		return "", r, argError("%s exists neither in this workspace nor in %s", pe.Path, from)
	case errors.Is(err, fs.ErrNotExist):
		return "", r, argError("no state %q: name a workspace (e.g. one made with the fork tool), NAME@CHECKPOINT, '@CHECKPOINT' for a checkpoint of this workspace, or '@parent' in a fork", from)
	case err != nil && !stopped:
		return "", r, err
	}
	var b strings.Builder
	if stopped {
		fmt.Fprintf(&b, "nothing was merged (policy fail): %d conflicts\n", len(r.Conflicts))
	} else {
		c.changes(r.Changed...)
		fmt.Fprintf(&b, "%s %s into this workspace: %d paths changed", verb, from, len(r.Changed))
		if r.Checkpoint != "" {
			fmt.Fprintf(&b, "; checkpoint %s holds the state before (restore it to undo)", r.Checkpoint)
		}
		b.WriteString("\n")
	}
	writeConflicts(&b, r.Conflicts)
	return strings.TrimSuffix(b.String(), "\n"), r, nil
}

func writeConflicts(b *strings.Builder, cs []provider.Conflict) {
	for _, cf := range cs {
		fmt.Fprintf(b, "- %s (%s): %s. Next: %s\n", cf.Path, cf.Kind, cf.Detail, cf.Next)
	}
}

func conflictsTool(ctx context.Context, c *call, _ conflictsIn) (string, conflictsOut, error) {
	m, err := c.merger()
	if err != nil {
		return "", conflictsOut{}, err
	}
	cs, err := m.Conflicts(ctx)
	if err != nil {
		return "", conflictsOut{}, err
	}
	if len(cs) == 0 {
		return "no unresolved merge conflicts", conflictsOut{Conflicts: []provider.Conflict{}}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d unresolved merge conflicts (settle each with the resolve tool):\n", len(cs))
	writeConflicts(&b, cs)
	return strings.TrimSuffix(b.String(), "\n"), conflictsOut{Conflicts: cs}, nil
}

func resolveTool(ctx context.Context, c *call, in resolveIn) (string, error) {
	m, err := c.merger()
	if err != nil {
		return "", err
	}
	switch in.Take {
	case "ours", "theirs", "markers":
		if in.Content != "" {
			return "", argError("content is only for take='content'")
		}
	case "content":
	default:
		return "", argError("take %q: use 'ours', 'theirs', 'markers' or 'content'", in.Take)
	}
	p, err := clean(in.Path)
	if err != nil {
		return "", err
	}
	if err := m.Resolve(ctx, p, in.Take, []byte(in.Content)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", argError("no conflict at %s; list them with the conflicts tool", p)
		}
		if errors.Is(err, fs.ErrInvalid) {
			return "", argError("%s is not a text file: markers need text; take 'ours', 'theirs' or give content", p)
		}
		return "", err
	}
	c.changes(p)
	left, err := m.Conflicts(ctx)
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("resolved %s (%s)", p, in.Take)
	if in.Take == "markers" {
		msg += "; edit the file to remove the markers"
	}
	if len(left) == 0 {
		return msg + "; no conflict left: the merge is complete", nil
	}
	return fmt.Sprintf("%s; %d conflicts left", msg, len(left)), nil
}

// mergeTools report conflicts themselves: no conflictNote.
var mergeTools = map[string]bool{"merge": true, "conflicts": true, "resolve": true, "cherry_pick": true, "promote": true}

// conflictNote is appended to every other tool's result while the
// workspace has unresolved merge conflicts.
func conflictNote(ctx context.Context, ws provider.Workspace) string {
	m, ok := ws.Snapshots().(provider.Merger)
	if !ok {
		return ""
	}
	cs, err := m.Conflicts(ctx)
	if err != nil || len(cs) == 0 {
		return ""
	}
	return fmt.Sprintf("\n(this workspace has %d unresolved merge conflicts, first %s; list them with the conflicts tool)", len(cs), cs[0].Path)
}
