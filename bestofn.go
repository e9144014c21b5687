package forkspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
	"golang.org/x/sync/errgroup"
)

// Best-of-N: fork a workspace N ways (ForkN), compare the N states
// (Compare), promote one and delete the others (Promote).

// Bounds of best-of-N calls.
const (
	// MaxForks is the most forks one ForkN makes.
	MaxForks = 64
	// MaxCompare is the most states one Compare takes (their pairs are
	// diffed: MaxCompare*(MaxCompare-1)/2 diffs).
	MaxCompare = 16
)

// ForkNOptions configure ForkN.
type ForkNOptions struct {
	// Names names the forks; when empty they are PREFIX-K for the N
	// smallest K ≥ 1 whose name is free.
	Names []string
	// Prefix is the prefix of generated names (default: the workspace's
	// name).
	Prefix string
	// Quota of the forks; zero inherits the source's quota.
	Quota meta.Quota
}

// ForkN forks the workspace's live state n ways in one transaction and
// returns the forks in name order. The same transaction takes a
// checkpoint of the state they start from (labelled "fork N ways: FIRST
// … LAST") and forks it, so the forks are siblings of one origin
// checkpoint: Promote finds the others by it, and restoring it undoes
// whatever was promoted. Each fork costs what Fork costs (no file is
// copied); nothing is created unless all are. A taken or invalid name, a
// repeated name or n outside 1…MaxForks (or not len(Names)) is an error
// (fs.ErrExist, fs.ErrInvalid) that changes nothing.
func (w *Workspace) ForkN(ctx context.Context, n int, opts ForkNOptions) ([]*Workspace, error) {
	forks, err := w.forkN(ctx, n, opts)
	if err != nil {
		return nil, fmt.Errorf("fork %s %d ways: %w", w.name, n, err)
	}
	return forks, nil
}

func (w *Workspace) forkN(ctx context.Context, n int, opts ForkNOptions) ([]*Workspace, error) {
	if n < 1 || n > MaxForks {
		return nil, fmt.Errorf("%w: the number of forks must be 1 to %d", fs.ErrInvalid, MaxForks)
	}
	if len(opts.Names) > 0 && len(opts.Names) != n {
		return nil, fmt.Errorf("%w: %d names for %d forks", fs.ErrInvalid, len(opts.Names), n)
	}
	if opts.Quota.MaxBytes < 0 || opts.Quota.MaxEntries < 0 {
		return nil, fmt.Errorf("%w: negative quota", fs.ErrInvalid)
	}
	prefix := opts.Prefix
	if prefix == "" {
		prefix = w.name
	}
	for _, name := range append(slices.Clone(opts.Names), prefix+"-"+strconv.Itoa(MaxForks)) {
		if err := ValidName(name); err != nil {
			return nil, err
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(opts.Names)))) != len(opts.Names) {
		return nil, fmt.Errorf("%w: a name is given twice", fs.ErrInvalid)
	}
	quota := opts.Quota
	if quota == (meta.Quota{}) {
		quota = w.Quota()
	}
	w.mounts.mu.Lock()
	specs := slices.Clone(w.mounts.specs)
	w.mounts.mu.Unlock()

	// Folding once costs about one copy of the staging delta, which each
	// fork and its base would copy otherwise (2N+1 copies).
	if n > 1 {
		if err := w.Fold(ctx); err != nil {
			return nil, err
		}
	}
	if err := w.Settle(ctx); err != nil { // the head is read from the store
		return nil, fmt.Errorf("fork %s: %w", w.name, err)
	}
	unlock, err := w.store.roots.hold(ctx)
	if err != nil {
		return nil, fmt.Errorf("fork %s: %w", w.name, err)
	}
	defer unlock()
	var rows []*meta.Workspace
	err = w.store.meta.Update(ctx, func(tx meta.Tx) error {
		names, err := forkNames(tx, w.tenant, n, opts.Names, prefix)
		if err != nil {
			return err
		}
		head, err := tx.Workspace(w.id)
		if err != nil {
			return err
		}
		label := fmt.Sprintf("fork %d ways: %s", n, names[0])
		if n > 1 {
			label += " … " + names[n-1]
		}
		origin := &meta.Checkpoint{ID: newID(checkpointPrefix), WorkspaceID: w.id, Label: label, Root: head.Root}
		if err := validLabel(label); err != nil {
			return err
		}
		if err := tx.CreateCheckpoint(origin); err != nil {
			return err
		}
		if err := tx.SnapshotStaged(w.id, origin.ID); err != nil {
			return err
		}
		rows = make([]*meta.Workspace, n)
		for i, name := range names {
			row := &meta.Workspace{ID: newID(workspacePrefix), Name: name, Tenant: w.tenant, ParentID: w.id, OriginCheckpoint: origin.ID, Root: head.Root, Quota: quota}
			if err := tx.CreateWorkspace(row); err != nil {
				return err
			}
			if err := persistMounts(tx, row.ID, specs); err != nil {
				return err
			}
			if err := copyExecPolicy(tx, w.id, row.ID); err != nil {
				return err
			}
			if err := tx.SetRoot(row.ID, head.Root); err != nil {
				return err
			}
			if err := tx.CopyStaged(w.id, row.ID); err != nil {
				return err
			}
			if err := recordBase(tx, row.ID, w.id, head.Root); err != nil {
				return err
			}
			rows[i] = row
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	w.store.folder.kick()
	forks := make([]*Workspace, 0, n)
	for _, row := range rows {
		f, err := w.store.openRow(ctx, row, nil)
		if err == nil {
			err = f.attachMounts(ctx, specs)
		}
		if err != nil {
			return forks, err
		}
		forks = append(forks, f)
	}
	return forks, nil
}

// FreeNames returns the names ForkN picks for n forks named after
// prefix: PREFIX-K for the n smallest K ≥ 1 whose name is free. A caller
// that must vet names first (httpapi, for a token's scope) passes them to
// ForkN as ForkNOptions.Names.
func (s *Store) FreeNames(ctx context.Context, prefix string, n int) ([]string, error) {
	var names []string
	err := s.meta.View(ctx, func(tx meta.Tx) (err error) {
		names, err = forkNames(tx, TenantFrom(ctx), n, nil, prefix)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("names of %d forks of %s: %w", n, prefix, err)
	}
	return names, nil
}

// forkNames checks the given names in tenant, or picks PREFIX-K for the
// n smallest free K, in sorted order.
func forkNames(tx meta.Tx, tenant string, n int, given []string, prefix string) ([]string, error) {
	taken := func(name string) (bool, error) {
		_, err := tx.WorkspaceByName(tenant, name)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return err == nil, err
	}
	if len(given) > 0 {
		for _, name := range given {
			t, err := taken(name)
			if err != nil {
				return nil, err
			}
			if t {
				return nil, fmt.Errorf("name %q: %w", name, fs.ErrExist)
			}
		}
		return slices.Sorted(slices.Values(given)), nil
	}
	if n < 1 || n > MaxForks {
		return nil, fmt.Errorf("%w: the number of forks must be 1 to %d", fs.ErrInvalid, MaxForks)
	}
	var names []string
	for k := 1; len(names) < n; k++ {
		name := prefix + "-" + strconv.Itoa(k)
		if k > n+MaxForks*4 {
			return nil, fmt.Errorf("names %s-K: %w: too many taken", prefix, fs.ErrExist)
		}
		t, err := taken(name)
		if err != nil {
			return nil, err
		}
		if !t {
			names = append(names, name)
		}
	}
	return names, nil
}

// Comparison compares states pairwise.
type Comparison struct {
	// States are the states compared, as given.
	States []string `json:"states"`
	// Changes[i][j] is the number of changes between States[i] and
	// States[j]: the length of the diff from the one listed first to the
	// other (each pair is diffed once); 0 on the diagonal.
	Changes [][]int `json:"changes"`
	// Pairs holds the diff of each pair i < j, in the order (0,1),
	// (0,2) … (1,2) …
	Pairs []PairDiff `json:"pairs"`
}

// PairDiff is the diff between two of the states compared.
type PairDiff struct {
	From    string       `json:"from"`
	To      string       `json:"to"`
	Changes []vfs.Change `json:"changes"`
}

// Compare diffs every pair of states (live heads or checkpoints, 2 to
// MaxCompare of them): each state is read once, unfolded, and each pair
// costs a structural diff, which follows the changes between them (and
// their staging deltas), not the size of the workspaces. A state given twice is fs.ErrInvalid.
func (s *Store) Compare(ctx context.Context, states []string, opts vfs.DiffOptions) (Comparison, error) {
	cmp, err := s.compare(ctx, states, opts)
	if err != nil {
		return Comparison{}, fmt.Errorf("compare %s: %w", strings.Join(states, " "), err)
	}
	return cmp, nil
}

func (s *Store) compare(ctx context.Context, states []string, opts vfs.DiffOptions) (Comparison, error) {
	if len(states) < 2 || len(states) > MaxCompare {
		return Comparison{}, fmt.Errorf("%w: compare takes 2 to %d states", fs.ErrInvalid, MaxCompare)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(states)))) != len(states) {
		return Comparison{}, fmt.Errorf("%w: a state is given twice", fs.ErrInvalid)
	}
	snaps := make([]*vfs.FS, len(states))
	for i, st := range states {
		var err error
		if snaps[i], err = s.Snapshot(ctx, st); err != nil {
			return Comparison{}, err
		}
	}
	n := len(states)
	cmp := Comparison{States: slices.Clone(states), Changes: make([][]int, n)}
	for i := range cmp.Changes {
		cmp.Changes[i] = make([]int, n)
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			cmp.Pairs = append(cmp.Pairs, PairDiff{From: states[i], To: states[j]})
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	k := 0
	for i := range n {
		for j := i + 1; j < n; j++ {
			p := &cmp.Pairs[k]
			k++
			g.Go(func() error {
				ch, err := vfs.Diff(gctx, snaps[i], snaps[j], opts)
				if err != nil {
					return fmt.Errorf("diff %s %s: %w", states[i], states[j], err)
				}
				if ch == nil {
					ch = []vfs.Change{}
				}
				p.Changes = ch
				cmp.Changes[i][j], cmp.Changes[j][i] = len(ch), len(ch)
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return Comparison{}, err
	}
	return cmp, nil
}

// PromoteOptions configure Promote.
type PromoteOptions struct {
	// Head makes the winner's state the parent's live head instead of
	// merging the winner into it: what the parent changed since the fork
	// is discarded (kept in the checkpoint taken first).
	Head bool
	// Policy is the merge's conflict policy (not with Head).
	Policy MergePolicy
	// Keep keeps the other forks instead of deleting them.
	Keep bool
}

// PromoteResult describes a promotion.
type PromoteResult struct {
	// Winner is the promoted fork and Into its parent.
	Winner string `json:"winner"`
	Into   string `json:"into"`
	// Head reports that the parent's head became the winner's state.
	Head bool `json:"head,omitempty"`
	// Checkpoint holds the parent as it was before: restore it to undo.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Merge is the merge of the winner into the parent (not with Head).
	Merge *MergeResult `json:"merge,omitempty"`
	// Deleted lists the other forks deleted, by name.
	Deleted []string `json:"deleted"`
}

// Promote settles a best-of-N: winner (a fork, by name or ID) is merged
// into its parent (Workspace.Merge with opts.Policy, labelled "promote:
// before WINNER"), or with opts.Head its live state becomes the parent's
// head after a checkpoint of the parent; then, unless opts.Keep, the
// other forks of the same origin checkpoint of the parent (the siblings
// one ForkN made) are deleted. The winner itself stays. A winner that is
// not a fork, or was forked from the parent's live head (no origin
// checkpoint, so no siblings are known) with Keep unset, is fs.ErrInvalid;
// a merge that the fail policy stops deletes nothing.
func (s *Store) Promote(ctx context.Context, winner string, opts PromoteOptions) (PromoteResult, error) {
	res, err := s.promote(ctx, winner, opts)
	if err != nil {
		return res, fmt.Errorf("promote %s: %w", winner, err)
	}
	return res, nil
}

func (s *Store) promote(ctx context.Context, winner string, opts PromoteOptions) (PromoteResult, error) {
	res := PromoteResult{Winner: winner, Deleted: []string{}}
	if opts.Head && opts.Policy != MergeRecord {
		return res, fmt.Errorf("%w: a merge policy does not apply with head", fs.ErrInvalid)
	}
	var (
		win, parent *meta.Workspace
		others      []meta.Workspace
	)
	err := s.meta.View(ctx, func(tx meta.Tx) error {
		var err error
		if win, err = lookup(tx, TenantFrom(ctx), winner); err != nil {
			return err
		}
		if win.ParentID == "" {
			return fmt.Errorf("%w: workspace %s is not a fork", fs.ErrInvalid, win.Name)
		}
		if parent, err = tx.Workspace(win.ParentID); err != nil {
			return fmt.Errorf("parent of %s: %w", win.Name, err)
		}
		if opts.Keep {
			return nil
		}
		others, err = siblings(tx, win, parent)
		return err
	})
	if err != nil {
		return res, err
	}
	res.Winner, res.Into, res.Head = win.Name, parent.Name, opts.Head
	into, err := s.Workspace(ctx, parent.ID)
	if err != nil {
		return res, err
	}
	label := "promote: before " + win.Name
	if opts.Head {
		cp, err := into.promoteHead(ctx, win.ID, label)
		if err != nil {
			return res, err
		}
		res.Checkpoint = cp
	} else {
		m, err := into.Merge(ctx, win.ID, MergeOptions{Policy: opts.Policy, Label: label})
		m.From = win.Name
		res.Merge, res.Checkpoint = &m, m.Checkpoint
		if err != nil {
			return res, err
		}
	}
	for _, o := range others {
		if err := s.Delete(ctx, o.ID); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, err
		}
		res.Deleted = append(res.Deleted, o.Name)
	}
	slices.Sort(res.Deleted)
	return res, nil
}

// Siblings returns, by name, the other forks of the state fork (a name
// or ID) was forked from, which Promote deletes: the forks of the same
// checkpoint of the same parent (the forks of one ForkN). A fork of a
// live head has no siblings it knows of: fs.ErrInvalid, as for a
// workspace that is not a fork.
func (s *Store) Siblings(ctx context.Context, fork string) ([]string, error) {
	var others []meta.Workspace
	err := s.meta.View(ctx, func(tx meta.Tx) error {
		win, err := lookup(tx, TenantFrom(ctx), fork)
		if err != nil {
			return err
		}
		if win.ParentID == "" {
			return fmt.Errorf("%w: workspace %s is not a fork", fs.ErrInvalid, win.Name)
		}
		parent, err := tx.Workspace(win.ParentID)
		if err != nil {
			return fmt.Errorf("parent of %s: %w", win.Name, err)
		}
		others, err = siblings(tx, win, parent)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("siblings of %s: %w", fork, err)
	}
	names := make([]string, len(others))
	for i, o := range others {
		names[i] = o.Name
	}
	slices.Sort(names)
	return names, nil
}

// siblings lists parent's other forks of win's origin checkpoint.
func siblings(tx meta.Tx, win, parent *meta.Workspace) ([]meta.Workspace, error) {
	if win.OriginCheckpoint == "" {
		return nil, fmt.Errorf("%w: %s was forked from the live state of %s, not by a fork of N (no siblings to delete); promote with keep, or merge it", fs.ErrInvalid, win.Name, parent.Name)
	}
	all, err := tx.Workspaces()
	if err != nil {
		return nil, err
	}
	var others []meta.Workspace
	for _, o := range all {
		if o.ID != win.ID && o.ParentID == win.ParentID && o.OriginCheckpoint == win.OriginCheckpoint {
			others = append(others, o)
		}
	}
	return others, nil
}

// promoteHead checkpoints the workspace under label and points its head
// at state's live state, as Restore does with a checkpoint.
func (w *Workspace) promoteHead(ctx context.Context, state, label string) (string, error) {
	cp, err := w.Checkpoint(ctx, label)
	if err != nil {
		return "", err
	}
	unlock, err := w.store.roots.hold(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	_, _, root, staged, err := w.store.resolve(ctx, state)
	if err != nil {
		return cp.ID, err
	}
	if err := w.Reset(ctx, root, staged); err != nil {
		return cp.ID, err
	}
	return cp.ID, nil
}
