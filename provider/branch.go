package provider

import "context"

// Brancher is the optional part of a Snapshots module for best-of-N:
// fork N ways, compare states, promote one fork (localprovider and
// memprovider have it; see forkspace.Workspace.ForkN, Store.Compare and
// Store.Promote). States are named as for Merger.
type Brancher interface {
	// ForkN forks the live state n ways in one step and returns the
	// forks' names: PREFIX-K ("" prefix: the workspace's name).
	ForkN(ctx context.Context, n int, prefix string) ([]string, error)
	// Compare diffs 2 to 16 states pairwise. Unified adds text diffs.
	Compare(ctx context.Context, states []string, unified bool) (Comparison, error)
	// Promote merges winner, a fork of this workspace made by ForkN, into
	// it with policy (as Merger.Merge), or with head makes winner's state
	// its live head, and deletes the other forks of the same ForkN.
	Promote(ctx context.Context, winner string, head bool, policy string) (PromoteReport, error)
}

// Comparison is the pairwise comparison of states.
type Comparison struct {
	States  []string   `json:"states" jsonschema:"the states compared, as given"`
	Changes [][]int    `json:"changes" jsonschema:"changes[i][j]: the number of changes between states i and j"`
	Pairs   []PairDiff `json:"pairs" jsonschema:"the diff of each pair i < j"`
}

// PairDiff is the diff between two compared states.
type PairDiff struct {
	From    string      `json:"from" jsonschema:"the state compared from"`
	To      string      `json:"to" jsonschema:"the state compared to"`
	Changes []DiffEntry `json:"changes" jsonschema:"the changes from one to the other, in order"`
}

// PromoteReport is the outcome of a promotion.
type PromoteReport struct {
	Winner     string       `json:"winner" jsonschema:"the fork promoted"`
	Head       bool         `json:"head,omitempty" jsonschema:"the winner's state became this workspace's head (no merge)"`
	Checkpoint string       `json:"checkpoint,omitempty" jsonschema:"checkpoint holding this workspace as it was before; restore it to undo"`
	Merge      *MergeReport `json:"merge,omitempty" jsonschema:"the merge of the winner into this workspace"`
	Deleted    []string     `json:"deleted" jsonschema:"the other forks, deleted"`
}
