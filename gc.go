package forkspace

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/forkspace/forkspace/blob/packblob"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/meta"
)

// GCOptions configure a garbage collection. The zero value collects
// garbage older than gc.DefaultGrace (24 h).
type GCOptions struct {
	// Grace is how long unreachable data is kept, in database time
	// (gc.DefaultGrace if zero; gc.NoGrace or any negative value: none).
	Grace time.Duration
	// DryRun plans without deleting anything.
	DryRun bool
	// Progress, if set, is called as phases advance.
	Progress func(phase string, done, total int64)
}

// GCReport describes a collection.
type GCReport struct {
	DryRun bool `json:"dry_run"`
	// Grace is the grace period applied.
	Grace time.Duration `json:"grace_ns"`
	// Plan is what the collection found: reachable data, the garbage it
	// planned to delete, and the unreachable data still within grace.
	Plan *gc.Plan `json:"plan"`
	// Reclaimed is what was deleted (zero for a dry run).
	Reclaimed gc.Counts `json:"reclaimed"`
	// Packs is the compaction of packs that followed, on a store that
	// packs small blobs (nil otherwise).
	Packs *PackCompaction `json:"packs,omitempty"`
}

// PackCompaction is the pack part of a collection: the plan, and what was
// done (zero for a dry run). See packblob.CompactPlan.Execute.
type PackCompaction struct {
	Plan *packblob.CompactPlan  `json:"plan"`
	Done packblob.CompactReport `json:"done"`
}

// GC collects garbage: tree nodes, inline bodies and blobs that no
// workspace head, checkpoint, staging row, recorded state within the
// history retention policy or pending upload reaches and that are older
// than the grace period. It first drops the recorded states past the
// policy (not for a dry run). It runs online, beside writers,
// forks, checkpoints and deletions; collections and checks of one store
// run one at a time. See package gc.
func (s *Store) GC(ctx context.Context, opts GCOptions) (GCReport, error) {
	unlock, err := s.collect(ctx)
	if err != nil {
		return GCReport{}, fmt.Errorf("collect garbage: %w", err)
	}
	defer unlock()
	if !opts.DryRun {
		if _, err := s.AuditLog().PruneStates(ctx); err != nil {
			return GCReport{}, fmt.Errorf("collect garbage: %w", err)
		}
	}
	o := gc.Options{Grace: opts.Grace, Lock: &s.roots, Progress: opts.Progress, Logger: s.log}
	p, err := gc.NewPlan(ctx, s.gcDeps(), o)
	if err != nil {
		return GCReport{}, fmt.Errorf("collect garbage: %w", err)
	}
	r := GCReport{DryRun: opts.DryRun, Grace: p.Now.Sub(p.Cutoff), Plan: p}
	if opts.DryRun {
		return r, s.compactPacks(ctx, &r)
	}
	if r.Reclaimed, err = p.Execute(ctx); err != nil {
		return r, fmt.Errorf("collect garbage: %w", err)
	}
	if err := s.compactPacks(ctx, &r); err != nil {
		return r, fmt.Errorf("collect garbage: %w", err)
	}
	return r, nil
}

// compactPacks rewrites the packs the collection left mostly dead and
// deletes retired packs past the grace period (docs/decisions/022).
func (s *Store) compactPacks(ctx context.Context, r *GCReport) error {
	if s.packs == nil {
		return nil
	}
	plan, err := s.packs.PlanCompaction(ctx, packblob.CompactOptions{Grace: r.Grace})
	if err != nil {
		return err
	}
	r.Packs = &PackCompaction{Plan: plan}
	if r.DryRun {
		return nil
	}
	r.Packs.Done, err = plan.Execute(ctx)
	return err
}

// Check verifies the store's integrity: the metadata database's own
// storage (when the driver is a meta.IntegrityChecker; a finding is a
// problem of kind "metadata"), then every reachable tree node, inline body
// and blob exists and hashes to its address (a walk stopped by damaged
// metadata is one more "metadata" problem). Damage is listed in the
// report (CheckReport.Clean is false), not returned as an error. Reads of
// a damaged object fail with errdefs.ErrCorrupt, never wrong bytes.
func (s *Store) Check(ctx context.Context) (*gc.CheckReport, error) {
	unlock, err := s.collect(ctx)
	if err != nil {
		return nil, fmt.Errorf("check store: %w", err)
	}
	defer unlock()
	var metaErr error
	if c, ok := s.meta.(meta.IntegrityChecker); ok {
		metaErr = c.CheckIntegrity(ctx)
		if metaErr != nil && !errors.Is(metaErr, errdefs.ErrCorrupt) {
			return nil, fmt.Errorf("check store: %w", metaErr)
		}
	}
	d := s.gcDeps()
	if s.packs != nil {
		d.Blobs = s.packs // the bucket, not the disk cache in front of it
	}
	r, err := gc.Check(ctx, d, gc.Options{Lock: &s.roots, Logger: s.log})
	if metaErr == nil {
		if err != nil {
			return nil, fmt.Errorf("check store: %w", err)
		}
		return r, nil
	}
	problems := []gc.Problem{{Kind: "metadata", Error: metaErr.Error()}}
	switch {
	case err == nil:
		r.Problems = append(problems, r.Problems...)
	case errors.Is(err, errdefs.ErrCorrupt): // the walk met the damage
		r = &gc.CheckReport{Problems: append(problems, gc.Problem{Kind: "metadata", Error: err.Error()})}
	default:
		return nil, fmt.Errorf("check store: %w", err)
	}
	return r, nil
}

// Usage returns the store's space accounting: stored and reachable
// objects and bytes, and per workspace the bytes only it reaches
// (exclusive: what deleting it would free) and the bytes it shares.
func (s *Store) Usage(ctx context.Context) (*gc.Usage, error) {
	unlock, err := s.collect(ctx) // a collection running meanwhile could delete what it walks
	if err != nil {
		return nil, fmt.Errorf("store usage: %w", err)
	}
	defer unlock()
	u, err := gc.ComputeUsage(ctx, s.gcDeps(), gc.Options{Lock: &s.roots, Logger: s.log})
	if err != nil {
		return nil, fmt.Errorf("store usage: %w", err)
	}
	return u, nil
}

// collect takes the right to collect or check: collections and checks of
// a store run one at a time, across every process sharing it too, and
// returns its release.
func (s *Store) collect(ctx context.Context) (func(), error) {
	return lockBoth(ctx, s.collecting.Lock, s.collecting.Unlock, s.roots.across, collectKey, false)
}

// collectKey names the cross-process lock of collections and checks.
const collectKey = "forkspace.collect"

func (s *Store) gcDeps() gc.Deps { return gc.Deps{Meta: s.meta, Blobs: s.blobs, KV: s.kv} }
