package forkspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/merge"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
	"golang.org/x/sync/errgroup"
)

// MergePolicy says what a merge does with conflicts.
type MergePolicy string

// Merge policies.
const (
	// MergeRecord applies everything else, keeps ours at each
	// conflicting path and records the conflicts (Workspace.Conflicts,
	// Resolve).
	MergeRecord MergePolicy = ""
	// MergeFail changes nothing when there is a conflict: Merge returns
	// the conflicts and an errdefs.ErrConflict error.
	MergeFail MergePolicy = "fail"
	// MergeOurs settles every conflict with ours' version.
	MergeOurs MergePolicy = "ours"
	// MergeTheirs settles every conflict with theirs' version.
	MergeTheirs MergePolicy = "theirs"
)

// MergeOptions configure Merge.
type MergeOptions struct {
	// Base is the state to merge from (its common ancestor with the
	// workspace); empty finds it (Store.MergeBase).
	Base string
	// Policy says what to do with conflicts.
	Policy MergePolicy
	// Label is the label of the checkpoint taken first ("merge: before
	// FROM" if empty).
	Label string
}

// MergeResult describes a merge.
type MergeResult struct {
	Into string `json:"into"`
	From string `json:"from"`
	// Base is the common ancestor the merge used.
	Base string `json:"base"`
	// Checkpoint is the ID of the checkpoint holding the workspace as it
	// was before the merge ("" when nothing changed).
	Checkpoint string `json:"checkpoint,omitempty"`
	// Changed lists the paths the merge changed in the workspace.
	Changed []string `json:"changed"`
	// Conflicts lists the conflicts: recorded (MergeRecord), settled by
	// the policy (MergeOurs, MergeTheirs; Resolved says how), or the
	// reason nothing changed (MergeFail).
	Conflicts []Conflict `json:"conflicts"`
}

// Conflict is a path a merge could not merge on its own.
type Conflict struct {
	Path string `json:"path"`
	// Kind is one of the merge package's kinds (merge.Content…).
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
	// Base, Ours and Theirs are the three versions.
	Base   ConflictVersion `json:"base"`
	Ours   ConflictVersion `json:"ours"`
	Theirs ConflictVersion `json:"theirs"`
	// Resolved is "ours" or "theirs" when a merge policy settled it.
	Resolved string `json:"resolved,omitempty"`
	// Next says how to go on.
	Next string `json:"next"`
}

// ConflictVersion is one version of a conflicting path: the state holding
// it, the path there and the BLAKE3 (hex) of its contents or symbolic
// link target ("" when the path held nothing or a directory).
type ConflictVersion struct {
	State string `json:"state"`
	Path  string `json:"path"`
	Hash  string `json:"hash,omitempty"`
}

func conflictFrom(c meta.Conflict) Conflict {
	v := func(s meta.ConflictSide) ConflictVersion { return ConflictVersion(s) }
	return Conflict{Path: c.Path, Kind: c.Kind, Detail: c.Detail, Base: v(c.Base), Ours: v(c.Ours), Theirs: v(c.Theirs),
		Next: fmt.Sprintf("resolve %s with ours, theirs, markers or new content", c.Path)}
}

// Merge merges state from (a workspace's head or checkpoint: a fork into
// its parent, a sibling, a checkpoint into the head…) into this
// workspace, three-way from their common ancestor (MergeOptions.Base, or
// Store.MergeBase). It diffs the base with each side (cost follows the
// changes, not the workspace) and, per path: a change on one side only
// applies; the same change on both sides counts once; changes to
// different lines of a text file merge (merge.Text); a rename on either
// side takes the other side's changes of the entry along. The rest is a
// conflict (the merge package lists the kinds: both changed the same
// lines, binary files, delete/modify, directory/file, add/add,
// rename/rename, mode, symbolic link and extended attribute clashes),
// handled by opts.Policy.
//
// The merge is atomic: one metadata transaction takes a checkpoint of the
// workspace as it was (opts.Label), applies every merged change, records
// the conflicts (MergeRecord) and the merged state (the next merge base
// of the two), or nothing happens. Writes to the workspace while a merge
// plans it may be merged as if they were ours.
func (w *Workspace) Merge(ctx context.Context, from string, opts MergeOptions) (MergeResult, error) {
	res, err := w.merge(ctx, from, opts, nil)
	if err != nil {
		return res, fmt.Errorf("merge %s into %s: %w", from, w.name, err)
	}
	return res, nil
}

// merge merges from into w; only, when not nil, restricts the merge to
// theirs' changes at or under those paths (a cherry-pick), which records
// no merged state.
func (w *Workspace) merge(ctx context.Context, from string, opts MergeOptions, only []string) (MergeResult, error) {
	res := MergeResult{Into: w.name, From: from, Changed: []string{}, Conflicts: []Conflict{}}
	switch opts.Policy {
	case MergeRecord, MergeFail, MergeOurs, MergeTheirs:
	default:
		return res, fmt.Errorf("%w: merge policy %q (want fail, ours or theirs)", fs.ErrInvalid, opts.Policy)
	}
	s := w.store
	unlock, err := s.roots.hold(ctx)
	if err != nil {
		return MergeResult{}, fmt.Errorf("merge %s into %s: %w", from, w.name, err)
	}
	defer unlock()
	var (
		theirsWS *meta.Workspace
		base     string
	)
	err = s.meta.View(ctx, func(tx meta.Tx) (err error) {
		if opts.Base == "" {
			theirsWS, base, err = sides(tx, w.tenant, w.id, from)
			return err
		}
		base = opts.Base
		theirsWS, _, err = lookupState(tx, w.tenant, from)
		return err
	})
	if err != nil {
		return res, err
	}
	res.Base = base
	baseFS, err := s.Snapshot(ctx, base)
	if err != nil {
		return res, fmt.Errorf("base %s: %w", base, err)
	}
	theirsFS, err := s.Snapshot(ctx, from)
	if err != nil {
		return res, err
	}
	// Nothing is folded: both sides diff from the base at once, through
	// their staging deltas.
	var (
		oursDiff, theirsDiff []vfs.Change
		g, gctx              = errgroup.WithContext(ctx)
	)
	g.Go(func() (err error) {
		theirsDiff, err = vfs.Diff(gctx, baseFS, theirsFS, vfs.DiffOptions{})
		return err
	})
	g.Go(func() (err error) {
		oursDiff, err = vfs.Diff(gctx, baseFS, w.FS, vfs.DiffOptions{})
		return err
	})
	if err := g.Wait(); err != nil {
		return res, err
	}
	// The merged state and the base are recorded as roots: folded here,
	// their new nodes stored in the merge's transaction.
	var folded foldedStates
	if folded.theirs, folded.nodes, err = theirsFS.FoldedRoot(ctx); err != nil {
		return res, err
	}
	baseRoot, baseNodes, err := baseFS.FoldedRoot(ctx)
	if err != nil {
		return res, err
	}
	folded.base, folded.nodes = baseRoot, append(folded.nodes, baseNodes...)
	label := opts.Label
	switch {
	case label != "":
	case only != nil:
		label = "cherry-pick: before " + from
	default:
		label = "merge: before " + from
	}
	if err := validLabel(label); err != nil {
		return res, err
	}
	ids := mergeIDs{before: newID(checkpointPrefix), merged: newID(checkpointPrefix), base: newID(checkpointPrefix), ours: newID(checkpointPrefix)}
	errFail := errors.New("conflicts")
	err = w.Batch(ctx, func(b *vfs.FS) error {
		m := &merger{
			base: baseFS, theirs: theirsFS, dst: b,
			ours: merge.NewSide(oursDiff), their: merge.NewSide(theirsDiff),
			policy: opts.Policy, ids: ids, wsID: w.id, only: only, mounted: w.mountRoots(),
			labels: merge.Labels{Ours: w.name, Base: "base", Theirs: from},
		}
		m.paths = merge.NewPaths(m.ours, m.their)
		if err := m.run(ctx); err != nil {
			return err
		}
		res.Changed, res.Conflicts = slices.Compact(slices.Sorted(slices.Values(m.changed))), m.conflicts
		if res.Changed == nil {
			res.Changed = []string{}
		}
		if opts.Policy == MergeFail && len(m.conflicts) > 0 {
			return errFail
		}
		return b.AlsoCommit(func(tx meta.Tx) error {
			return m.record(tx, label, theirsWS.ID, folded)
		})
	})
	if errors.Is(err, errFail) {
		res.Changed = []string{}
		for i := range res.Conflicts {
			res.Conflicts[i].Next = "nothing was merged; merge again with ours or theirs, or without fail to record the conflicts"
		}
		return res, fmt.Errorf("%w: %d conflicts, nothing merged (first: %s, %s)", errdefs.ErrConflict, len(res.Conflicts), res.Conflicts[0].Path, res.Conflicts[0].Kind)
	}
	if err != nil {
		return res, err
	}
	res.Checkpoint = ids.before
	s.folder.kick()
	return res, nil
}

// mergeIDs are the checkpoints a merge records: the workspace before it,
// the merged state (a merge base later; for a cherry-pick with conflicts,
// theirs' version), and for conflicts the base and ours versions.
type mergeIDs struct{ before, merged, base, ours string }

// record writes, in the merge's commit transaction, the checkpoint of the
// workspace as it was (its head's rows are still the old ones: the batch's
// rows are written after), the merged state, and the conflicts with the
// versions they refer to.
func (m *merger) record(tx meta.Tx, label string, source string, folded foldedStates) error {
	if err := takeBefore(tx, m.wsID, m.ids.before, label); err != nil {
		return err
	}
	if len(folded.nodes) > 0 {
		if err := tx.PutNodes(folded.nodes); err != nil {
			return err
		}
	}
	head, err := tx.Workspace(m.wsID)
	if err != nil {
		return err
	}
	var rows []meta.Conflict
	for _, c := range m.conflicts {
		if c.Resolved == "" {
			rows = append(rows, meta.Conflict{WorkspaceID: m.wsID, Path: c.Path, Kind: c.Kind, Detail: c.Detail,
				Base: meta.ConflictSide(c.Base), Ours: meta.ConflictSide(c.Ours), Theirs: meta.ConflictSide(c.Theirs)})
		}
	}
	// A whole merge records the state it brought in: the next merge base.
	// A cherry-pick brought only part of it: its theirs' version is kept
	// for its conflicts alone.
	if m.only == nil || len(rows) > 0 {
		merged := &meta.Checkpoint{ID: m.ids.merged, WorkspaceID: m.wsID, Root: folded.theirs, Kind: meta.CheckpointMerged, Source: source}
		if m.only != nil {
			merged.Kind, merged.Label = meta.CheckpointConflict, "theirs"
		}
		if err := tx.CreateCheckpoint(merged); err != nil {
			return err
		}
	}
	if len(rows) == 0 {
		return nil
	}
	// The versions conflicts refer to stay as long as the conflicts do.
	kept := []*meta.Checkpoint{
		{ID: m.ids.base, WorkspaceID: m.wsID, Label: "base", Root: folded.base, Kind: meta.CheckpointConflict},
		{ID: m.ids.ours, WorkspaceID: m.wsID, Label: "ours", Root: head.Root, Kind: meta.CheckpointConflict},
	}
	for _, c := range kept {
		if err := tx.CreateCheckpoint(c); err != nil {
			return err
		}
	}
	if err := tx.SnapshotStaged(m.wsID, m.ids.ours); err != nil {
		return err
	}
	return tx.PutConflicts(rows)
}

// foldedStates are theirs and the base as roots, with the tree nodes those
// roots need that are not stored yet.
type foldedStates struct {
	theirs, base cas.Hash
	nodes        []meta.Object
}

// Conflicts lists the workspace's unresolved merge conflicts, by path.
func (w *Workspace) Conflicts(ctx context.Context) ([]Conflict, error) {
	var rows []meta.Conflict
	err := w.store.meta.View(ctx, func(tx meta.Tx) error {
		var err error
		rows, err = tx.Conflicts(w.id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("conflicts of %s: %w", w.name, err)
	}
	out := make([]Conflict, len(rows))
	for i, r := range rows {
		out[i] = conflictFrom(r)
	}
	return out, nil
}

// stateName is the state string of checkpoint id of workspace wsID.
func stateName(wsID, id string) string { return wsID + "@" + id }
