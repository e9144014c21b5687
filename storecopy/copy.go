package storecopy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/blob/packblob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// Settings a copy treats specially.
const (
	// SettingSource marks a copy's destination with the source it copies
	// (Side.Name), from before its first write; it stays as a record.
	SettingSource = "copy_source"
	// settingBlobStore is the store's record of where its blobs are
	// (forkspace's blobstore.go): the destination's own, not the source's.
	settingBlobStore = "blob_store"
	// settingFormat is written by the final transaction only: a
	// destination that has it holds a whole store.
	settingFormat = "format"
)

// Side is one end of a copy.
type Side struct {
	Meta  meta.Store
	Blobs blob.Store
	// Name describes the side in messages and in SettingSource; it must
	// not hold credentials.
	Name string
	// BlobLocation is what the destination records as its blob store
	// ("local" for the store directory's blobs/, a blob.Locator's
	// location); "" records nothing (the store's first open does).
	BlobLocation string
}

// Options tune a copy.
type Options struct {
	// Progress hears of each phase's advance (nil: nothing).
	Progress func(Progress)
	// Parallel bounds the blobs copied at once (default 8).
	Parallel int
	// Salvage copies what a damaged source still yields instead of
	// failing at the first unreadable row or object; Report.Lost names
	// the rest.
	Salvage bool
}

// Progress is a phase's advance: "blobs", "nodes", "bodies", "metadata",
// "verify".
type Progress struct {
	Phase       string `json:"phase"`
	Done, Total int64
	Bytes       int64 `json:"bytes"`
}

// Report is what a copy did.
type Report struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Resumed is set when the destination held an unfinished copy of the
	// same source.
	Resumed bool `json:"resumed"`
	// Tables has, for each metadata table, the rows copied and their
	// digest, equal on both sides once verified.
	Tables    map[string]Table `json:"tables"`
	Blobs     int64            `json:"blobs"`
	BlobBytes int64            `json:"blob_bytes"`
	Verified  bool             `json:"verified"`
	// Lost lists what a salvage could not read (empty otherwise).
	Lost []Loss `json:"lost,omitempty"`
}

// Table is one metadata table's row count and digest.
type Table struct {
	Rows   int64  `json:"rows"`
	Digest string `json:"digest"`
}

// Loss is one thing a salvage could not copy.
type Loss struct {
	// Kind is "workspace", "checkpoint", "history", "file", "table",
	// "blob", "node" or "body".
	Kind string `json:"kind"`
	// Name is the workspace (tenant/name), the checkpoint
	// (workspace@label), the table, the workspace path or the hash.
	Name  string `json:"name"`
	Error string `json:"error"`
}

// ErrLost is the error of a salvage that left something behind: what it
// read is in the destination, what it could not is in Report.Lost.
var ErrLost = errors.New("some of the store could not be read")

// Copy copies the store src into dst, which must be empty (or hold an
// unfinished copy of src), and verifies it. A destination in any other
// state is errdefs.ErrNotEmpty and is left unchanged. A verification
// mismatch is errdefs.ErrCorrupt. With Options.Salvage, a source that
// could not be read whole gives a report listing the losses and an error
// wrapping ErrLost.
func Copy(ctx context.Context, src, dst Side, o Options) (*Report, error) {
	if o.Parallel <= 0 {
		o.Parallel = 8
	}
	r := &Report{From: src.Name, To: dst.Name}
	// A store that packs small blobs (S3, decision 022) holds most of
	// them in packs that only its own metadata indexes: read and write
	// its blobs through the pack layer. (Not closed: it would close the
	// side's blob store; every pack is stored by the copy's Sync.)
	var err error
	for _, side := range []*Side{&src, &dst} {
		if side.Blobs, _, err = packblob.IfPackable(side.Blobs, packblob.Options{Meta: side.Meta}); err != nil {
			return nil, err
		}
	}
	c := &copier{src: src, dst: dst, o: o, r: r}
	if r.Resumed, err = claim(ctx, src, dst); err != nil {
		return nil, err
	}
	cat, err := readCatalog(ctx, src.Meta, c.lose)
	if err != nil {
		return r, fmt.Errorf("copy from %s: read metadata: %w", src.Name, err)
	}
	objs, err := c.objectsOf(ctx, cat)
	if err != nil {
		return r, err
	}
	if objs.blobs, err = c.copyBlobs(ctx, objs.blobs); err != nil {
		return r, err
	}
	if r.Tables, err = objs.tables(cat); err != nil {
		return r, err
	}
	if err := c.copyObjects(ctx, nodeKind, objs.nodes); err != nil {
		return r, err
	}
	if err := c.copyObjects(ctx, bodyKind, objs.bodies); err != nil {
		return r, err
	}
	c.progress("metadata", 0, 1, 0)
	if err := dst.Meta.Update(ctx, func(tx meta.Tx) error { return writeCatalog(tx, cat, dst) }); err != nil {
		return r, fmt.Errorf("copy to %s: write metadata: %w", dst.Name, err)
	}
	if err := meta.Sync(ctx, dst.Meta); err != nil {
		return r, fmt.Errorf("copy to %s: %w", dst.Name, err)
	}
	c.progress("metadata", 1, 1, 0)
	if err := c.verify(ctx, objs); err != nil {
		return r, err
	}
	r.Verified = true
	if len(r.Lost) > 0 {
		return r, fmt.Errorf("salvage %s: %d lost: %w", src.Name, len(r.Lost), ErrLost)
	}
	return r, nil
}

// objects lists what a copy moves besides the catalog, by hash.
type objects struct {
	nodes, bodies, blobs []object
}

// objectsOf lists the source's objects: every one stored, or, in a
// salvage, those the catalog's states reach and that can be read (the
// catalog loses the states that reach unreadable nodes).
func (c *copier) objectsOf(ctx context.Context, cat *catalog) (*objects, error) {
	if c.o.Salvage {
		return c.salvageObjects(ctx, cat)
	}
	var (
		o   objects
		err error
	)
	if o.nodes, err = listObjects(ctx, c.src.Meta, nodeKind); err != nil {
		return nil, fmt.Errorf("copy from %s: list nodes: %w", c.src.Name, err)
	}
	if o.bodies, err = listObjects(ctx, c.src.Meta, bodyKind); err != nil {
		return nil, fmt.Errorf("copy from %s: list inline bodies: %w", c.src.Name, err)
	}
	if o.blobs, err = listBlobs(ctx, c.src.Blobs); err != nil {
		return nil, fmt.Errorf("copy from %s: list blobs: %w", c.src.Name, err)
	}
	return &o, nil
}

// tables digests the catalog and the objects.
func (o *objects) tables(cat *catalog) (map[string]Table, error) {
	t, err := cat.tables()
	if err != nil {
		return nil, err
	}
	for name, objs := range map[string][]object{"nodes": o.nodes, "inline_bodies": o.bodies, "blobs": o.blobs} {
		if t[name], err = digestRows(objs); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// verify reads the destination back: its catalog compared table by table
// with the source's, every node, body and blob read and hashed.
func (c *copier) verify(ctx context.Context, o *objects) error {
	c.progress("verify", 0, 1, 0)
	cat, err := readCatalog(ctx, c.dst.Meta, func(_, _ string, err error) error { return err })
	if err != nil {
		return fmt.Errorf("verify %s: read metadata: %w", c.dst.Name, err)
	}
	got, err := o.tables(cat)
	if err != nil {
		return err
	}
	var diff []string
	for _, name := range sortedKeys(c.r.Tables) {
		if want := c.r.Tables[name]; got[name] != want {
			diff = append(diff, fmt.Sprintf("%s (%d rows, want %d)", name, got[name].Rows, want.Rows))
		}
	}
	if len(diff) > 0 {
		return fmt.Errorf("verify %s: %w: tables differ from the source: %s", c.dst.Name, errdefs.ErrCorrupt, strings.Join(diff, ", "))
	}
	if err := c.verifyObjects(ctx, nodeKind, o.nodes); err != nil {
		return err
	}
	if err := c.verifyObjects(ctx, bodyKind, o.bodies); err != nil {
		return err
	}
	return c.verifyBlobs(ctx, o.blobs)
}

// claim checks that dst may receive src and marks it: it reports whether
// dst holds an unfinished copy of src.
func claim(ctx context.Context, src, dst Side) (resumed bool, err error) {
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("copy to %s: %w: %s", dst.Name, errdefs.ErrNotEmpty, fmt.Sprintf(format, args...))
	}
	err = dst.Meta.Update(ctx, func(tx meta.Tx) error {
		resumed = false
		ct, err := meta.CopyOf(tx)
		if err != nil {
			return err
		}
		set, err := ct.Settings()
		if err != nil {
			return err
		}
		if from, ok := set[SettingSource]; ok {
			if _, done := set[settingFormat]; done {
				return refuse("it holds a finished copy of %s", from)
			}
			if from != src.Name {
				return refuse("it holds an unfinished copy of %s, not of %s (empty it first)", from, src.Name)
			}
			resumed = true
			return nil
		}
		if _, ok := set[settingFormat]; ok {
			return refuse("it holds a store")
		}
		if what, err := metaContents(tx); err != nil || what != "" {
			if err == nil {
				err = refuse("its metadata holds %s", what)
			}
			return err
		}
		return tx.SetSetting(SettingSource, src.Name)
	})
	if err != nil {
		return false, err
	}
	if resumed {
		return true, nil
	}
	// The blob store is checked after the mark, so that a rerun after a
	// copy interrupted in its blobs is recognised by the mark; a blob
	// store in use is refused before any blob is written.
	found := errors.New("found")
	if err := dst.Blobs.List(ctx, func(blob.Info) error { return found }); errors.Is(err, found) {
		return false, refuse("its blob store is not empty (another store's blobs? give each store a prefix of its own)")
	} else if err != nil {
		return false, fmt.Errorf("copy to %s: list blobs: %w", dst.Name, err)
	}
	return false, nil
}

// metaContents names what a destination database without a store holds
// ("" for nothing).
func metaContents(tx meta.Tx) (string, error) {
	ws, err := tx.Workspaces()
	if err != nil || len(ws) > 0 {
		return fmt.Sprintf("%d workspaces", len(ws)), err
	}
	var n int
	stop := errors.New("stop")
	count := func(meta.ObjectInfo) error { n++; return stop }
	for _, scan := range []struct {
		what string
		fn   func(func(meta.ObjectInfo) error) error
	}{{"tree nodes", tx.Nodes}, {"inline bodies", tx.InlineBodies}} {
		if err := scan.fn(count); err != nil && !errors.Is(err, stop) {
			return "", err
		}
		if n > 0 {
			return scan.what, nil
		}
	}
	if has, err := tx.HasTokens(); err != nil || has {
		return "tokens", err
	}
	if es, err := tx.Audit(meta.AuditFilter{Limit: 1}); err != nil || len(es) > 0 {
		return "audit entries", err
	}
	return "", nil
}

// copier is one copy's state.
type copier struct {
	src, dst Side
	o        Options
	r        *Report
	// lostBlob reports the files a salvage loses with an unreadable
	// blob.
	lostBlob func(cas.Hash, error) error
}

func (c *copier) progress(phase string, done, total, bytes int64) {
	if c.o.Progress != nil {
		c.o.Progress(Progress{Phase: phase, Done: done, Total: total, Bytes: bytes})
	}
}

// lose records a loss of a salvage, or returns err when not salvaging.
func (c *copier) lose(kind, name string, err error) error {
	if !c.o.Salvage || errors.Is(err, context.Canceled) || errors.Is(err, fs.ErrClosed) {
		return err
	}
	c.r.Lost = append(c.r.Lost, Loss{Kind: kind, Name: name, Error: err.Error()})
	return nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
