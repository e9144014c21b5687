package localprovider

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/vfs"
)

var _ provider.Brancher = (*Workspace)(nil)

// ForkN implements provider.Brancher.
func (x *Workspace) ForkN(ctx context.Context, n int, prefix string) ([]string, error) {
	forks, err := x.w.ForkN(ctx, n, forkspace.ForkNOptions{Prefix: prefix})
	names := make([]string, len(forks))
	for i, f := range forks {
		names[i] = f.Name()
	}
	return names, err
}

// Compare implements provider.Brancher. Each state other than this
// workspace's own must share an ancestor with it (a merge base), so that
// a session reads only its own lineage.
func (x *Workspace) Compare(ctx context.Context, states []string, unified bool) (provider.Comparison, error) {
	resolved := make([]string, len(states))
	for i, s := range states {
		state, err := x.mergeState(ctx, s)
		if err != nil {
			return provider.Comparison{}, err
		}
		if ws, _, _ := strings.Cut(state, "@"); ws != x.w.ID() && ws != x.w.Name() {
			if _, err := x.p.st.MergeBase(ctx, x.w.ID(), state); err != nil {
				return provider.Comparison{}, lineageError(s, err)
			}
		}
		resolved[i] = state
	}
	cmp, err := x.p.st.Compare(ctx, resolved, vfs.DiffOptions{Unified: unified})
	if err != nil {
		return provider.Comparison{}, err
	}
	out := provider.Comparison{States: states, Changes: cmp.Changes, Pairs: make([]provider.PairDiff, len(cmp.Pairs))}
	k := 0
	for i := range states {
		for j := i + 1; j < len(states); j++ {
			out.Pairs[k] = provider.PairDiff{From: states[i], To: states[j], Changes: diffEntries(cmp.Pairs[k].Changes)}
			k++
		}
	}
	return out, nil
}

// Promote implements provider.Brancher: winner must be a fork of this
// workspace.
func (x *Workspace) Promote(ctx context.Context, winner string, head bool, policy string) (provider.PromoteReport, error) {
	w, err := x.p.st.Workspace(ctx, winner)
	if err != nil {
		return provider.PromoteReport{}, err
	}
	if w.ParentID() != x.w.ID() {
		return provider.PromoteReport{}, fmt.Errorf("promote %s: %w: not a fork of %s", winner, fs.ErrInvalid, x.w.Name())
	}
	r, err := x.p.st.Promote(ctx, w.ID(), forkspace.PromoteOptions{Head: head, Policy: forkspace.MergePolicy(policy)})
	rep := provider.PromoteReport{Winner: r.Winner, Head: r.Head, Checkpoint: r.Checkpoint, Deleted: r.Deleted}
	if r.Merge != nil {
		m := mergeReport(*r.Merge)
		rep.Merge = &m
	}
	return rep, err
}

// lineageError names state s, which the caller gave, as missing or as
// sharing no ancestor with this workspace (a *fs.PathError whose Path is
// s), instead of the merge base lookup's words (workspace IDs, the
// metadata's operations).
func lineageError(s string, err error) error {
	switch {
	case errors.Is(err, forkspace.ErrNoMergeBase):
		return &fs.PathError{Op: "compare", Path: s, Err: forkspace.ErrNoMergeBase}
	case errors.Is(err, fs.ErrNotExist):
		return &fs.PathError{Op: "compare", Path: s, Err: fs.ErrNotExist}
	}
	return err
}
