package meta

import (
	"context"
	"fmt"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
)

// Store is the metadata database: the workspace catalog, checkpoints, staging
// rows, tree nodes, inline file bodies, counters and settings of one store.
//
// Errors: a missing row is fs.ErrNotExist; a name already taken is
// fs.ErrExist; damaged data is errdefs.ErrCorrupt. Drivers wrap them so
// errors.Is finds the sentinel and keep the cause.
//
// Concurrency: all methods are safe for concurrent use.
type Store interface {
	// View runs fn in a read-only transaction that sees one consistent
	// snapshot of the database.
	View(ctx context.Context, fn func(Tx) error) error

	// Update runs fn in a read-write transaction. When fn returns nil the
	// transaction is durable once Update returns; when fn returns an error
	// nothing fn did is visible and Update returns that error. Drivers may
	// group concurrent Update calls into one database transaction (group
	// commit); each fn is still all-or-nothing on its own. fn may be called
	// again on a retryable conflict, so it must not have side effects outside
	// the Tx.
	Update(ctx context.Context, fn func(Tx) error) error

	// GetNode returns the bytes of an immutable tree node (fs.ErrNotExist if
	// absent). Nodes never change, so no transaction is needed.
	GetNode(ctx context.Context, h cas.Hash) ([]byte, error)

	// GetInline returns the bytes of an immutable inline file body
	// (fs.ErrNotExist if absent).
	GetInline(ctx context.Context, h cas.Hash) ([]byte, error)

	// GetInlines reads many inline bodies at once (drivers send one query
	// per batch of hashes) and calls fn with the bytes of each body of hs
	// that exists, once per distinct hash, in no particular order. A body
	// that is absent is not reported: the caller finds it missing. fn owns
	// data; an error from fn stops the read and is returned.
	GetInlines(ctx context.Context, hs []cas.Hash, fn func(h cas.Hash, data []byte) error) error

	// Close releases the database. Calls after Close fail with fs.ErrClosed.
	Close() error
}

// CheckedInlines is implemented by stores that keep a checksum beside each
// inline body, written with it (the SQL drivers: CRC-32C,
// docs/decisions/034-inline-body-checksums.md). Checking a body against it
// costs a fraction of hashing it again, which bulk readers (grep, export)
// would otherwise pay for every file.
type CheckedInlines interface {
	// GetCheckedInlines is GetInlines that also reports whether each body
	// matched the checksum stored with it. A body stored without one
	// (before checksums) or that does not match is reported unchecked:
	// the caller verifies it against its hash, which tells a damaged body
	// (errdefs.ErrCorrupt) from a damaged checksum (the body is sound).
	GetCheckedInlines(ctx context.Context, hs []cas.Hash, fn func(h cas.Hash, data []byte, checked bool) error) error
}

// Tx is one transaction. A Tx must not be used after its View or Update
// function returns, nor from more than one goroutine.
type Tx interface {
	// Now returns the database's clock. Grace periods are measured with it,
	// never with a client clock.
	Now() (time.Time, error)

	// Setting returns a store-wide setting (fs.ErrNotExist if unset).
	Setting(key string) (string, error)
	// SetSetting creates or replaces a store-wide setting.
	SetSetting(key, value string) error

	// SessionRefTx keeps the provider refs of agent sessions.
	SessionRefTx

	// Allocate reserves n consecutive values of the named counter and
	// returns the first. Counters start at 1 and never repeat.
	Allocate(name string, n int64) (first int64, err error)

	// PutNodes stores immutable tree nodes. Storing a node that already
	// exists is a no-op.
	PutNodes(nodes []Object) error
	// PutInline stores immutable inline file bodies. Idempotent.
	PutInline(bodies []Object) error

	// CreateWorkspace inserts w. w.ID must be unique, and w.Name unique
	// within w.Tenant (fs.ErrExist otherwise); an empty Tenant is
	// DefaultTenant (written back into w). CreatedAt and UpdatedAt are
	// set from the database clock when zero.
	CreateWorkspace(w *Workspace) error
	// Workspace returns the workspace with the given ID.
	Workspace(id string) (*Workspace, error)
	// WorkspaceByName returns tenant's workspace with the given name.
	WorkspaceByName(tenant, name string) (*Workspace, error)
	// Workspaces lists all workspaces of every tenant ordered by name,
	// then tenant.
	Workspaces() ([]Workspace, error)
	// SetRoot points the workspace's head at root and bumps UpdatedAt.
	SetRoot(id string, root cas.Hash) error
	// SetQuota replaces the workspace's quota.
	SetQuota(id string, q Quota) error
	// DeleteWorkspace removes the workspace, its checkpoints and its
	// staging rows. The nodes and bodies they reference stay until garbage
	// collection.
	DeleteWorkspace(id string) error
	// CheckHead fails with ErrHeadMoved unless the workspace's head
	// generation (Workspace.HeadGen) is gen; AdvanceHead does the same
	// and then increments it. A process sharing the store with others
	// advances the generation in every transaction that changes the
	// head's state, and checks it in one that rewrites the head without
	// changing its state (a fold), so a process whose mirror of the head
	// is out of date commits nothing (docs/decisions/023). A missing
	// workspace is fs.ErrNotExist.
	CheckHead(id string, gen int64) error
	AdvanceHead(id string, gen int64) error

	// CreateCheckpoint inserts c (fs.ErrExist if c.ID is taken).
	CreateCheckpoint(c *Checkpoint) error
	// Checkpoint returns the checkpoint with the given ID.
	Checkpoint(id string) (*Checkpoint, error)
	// Checkpoints lists a workspace's checkpoints of every kind, oldest
	// first.
	Checkpoints(workspaceID string) ([]Checkpoint, error)
	// CheckpointCounts returns how many user checkpoints (Kind "") each workspace has, by
	// workspace ID (workspaces without any are absent), in one read.
	CheckpointCounts() (map[string]int, error)
	// DeleteCheckpoint removes one checkpoint.
	DeleteCheckpoint(id string) error

	// PutStaged upserts staging rows of a workspace: each row replaces any
	// row with the same key.
	PutStaged(workspaceID string, rows []Staged) error
	// Staged returns all staging rows of a workspace ordered by key.
	Staged(workspaceID string) ([]Staged, error)
	// DeleteStaged removes the workspace's staging rows whose Seq <= maxSeq.
	DeleteStaged(workspaceID string, maxSeq int64) error
	// StagedKey calls fn with each workspace's staging row for key, in
	// workspace ID order, skipping workspaces without one: one indexed
	// read for all workspaces (List reads every usage record this way).
	StagedKey(key []byte, fn func(workspaceID string, row Staged) error) error

	// StateTx copies staging deltas for fork, checkpoint and restore.
	StateTx

	// GCTx holds the methods garbage collection and its writers use.
	GCTx

	// AuditTx keeps the audit log (meta/audit.go).
	AuditTx

	// MergeTx keeps the conflicts of unfinished merges (meta/merge.go).
	MergeTx

	// TokenTx keeps tenants and access tokens (meta/tokens.go).
	TokenTx

	// HistoryTx keeps the states audited calls produced (meta/history.go).
	HistoryTx

	// PackTx keeps the index of packs of small blobs (meta/packs.go).
	PackTx
}

// GCTx is the part of a Tx that garbage collection (package gc) relies on:
// touch times of nodes and inline bodies, upload intents, and the
// two-phase deletion of blobs. PutNodes and PutInline refresh the touch
// time (database clock) of an object that already exists.
type GCTx interface {
	// CollectionClock returns the database clock (Now) once every Update
	// that began before the call has ended, and holds back Updates that
	// begin meanwhile until this transaction ends: a write that a
	// snapshot taken after this transaction misses is stamped after the
	// time returned. The collector reads its T0 with it (package gc).
	// Drivers with one writer at a time get this from their order alone;
	// drivers running writers side by side need a barrier. In a View it
	// fails with errdefs.ErrReadOnly.
	CollectionClock() (time.Time, error)

	// AddIntents records that the caller is about to store (or reference
	// without storing) the blobs hashes, before it writes any of them, and
	// returns the intent's ID. Pending intents are roots of garbage
	// collection. If a hash is being deleted by the collector (see
	// MarkDeleting) AddIntents fails with errdefs.ErrBusy and records
	// nothing: retry after a short wait, then store the blob again.
	AddIntents(hashes []cas.Hash) (id int64, err error)
	// ReleaseIntents marks intents released, in the transaction that
	// commits the metadata referencing their blobs. Released intents stay
	// as evidence of recent use until ForgetIntents drops them. Unknown
	// IDs are ignored.
	ReleaseIntents(ids []int64) error
	// Intents calls fn for every intent row.
	Intents(fn func(Intent) error) error
	// ForgetIntents drops released intents created before released, and
	// pending ones created before pending (their writer died).
	ForgetIntents(released, pending time.Time) error

	// Nodes calls fn for every stored tree node (hash, size, touch time).
	Nodes(fn func(ObjectInfo) error) error
	// InlineBodies calls fn for every stored inline body.
	InlineBodies(fn func(ObjectInfo) error) error
	// DeleteNodes deletes the listed nodes whose touch time is before
	// touchedBefore and returns how many it deleted; others (missing, or
	// touched since) are left alone.
	DeleteNodes(hashes []cas.Hash, touchedBefore time.Time) (int, error)
	// DeleteInline is DeleteNodes for inline bodies.
	DeleteInline(hashes []cas.Hash, touchedBefore time.Time) (int, error)

	// Condemn records blobs the collector plans to delete (state
	// condemned). Condemning a blob already recorded keeps its state.
	Condemn(hashes []cas.Hash) error
	// MarkDeleting re-checks the condemned blobs: it drops those with a
	// pending intent or an intent created at or after since (a writer
	// started using them after the collector's snapshot), marks the rest
	// deleting, and returns every blob in state deleting. From then on
	// AddIntents of those blobs is errdefs.ErrBusy.
	MarkDeleting(since time.Time) ([]cas.Hash, error)
	// Condemned lists the recorded blobs with their state.
	Condemned() ([]Condemned, error)
	// Uncondemn drops blobs from the record (after their deletion, or to
	// abandon it).
	Uncondemn(hashes []cas.Hash) error
}

// Intent is one upload intent row: the writer's intent ID and one blob.
type Intent struct {
	ID        int64
	Hash      cas.Hash
	CreatedAt time.Time
	Released  bool
}

// ObjectInfo describes a stored node or inline body.
type ObjectInfo struct {
	Hash      cas.Hash
	Size      int64
	TouchedAt time.Time
}

// Condemned is a blob the collector recorded for deletion.
type Condemned struct {
	Hash cas.Hash
	// Deleting is set once the re-check passed: the blob is being deleted.
	Deleting bool
}

// Object is an immutable, content-addressed byte string kept in metadata.
type Object struct {
	Hash cas.Hash
	Data []byte
}

// Quota limits a workspace. Zero means unlimited.
type Quota struct {
	MaxBytes   int64 `json:"max_bytes,omitempty"`
	MaxEntries int64 `json:"max_entries,omitempty"`
}

// Workspace is one row of the workspace catalog.
type Workspace struct {
	ID   string
	Name string
	// Tenant owns the workspace: names are unique per tenant.
	Tenant string
	// Root is the committed tree root (zero for an empty tree). Staging
	// rows are applied on top of it.
	Root cas.Hash
	// ParentID is the workspace this one was forked from ("" if none).
	ParentID string
	// OriginCheckpoint is the checkpoint this one was forked from ("" if it
	// was forked from the live state or created empty).
	OriginCheckpoint string
	Quota            Quota
	CreatedAt        time.Time
	UpdatedAt        time.Time
	// HeadGen counts the changes of the head's state made by processes
	// sharing the store (Tx.AdvanceHead); 0 in a store no one shared.
	HeadGen int64
}

// ErrHeadMoved is the error of Tx.CheckHead and Tx.AdvanceHead when the
// workspace's head generation is not the one the caller mirrors: another
// process changed the workspace since the caller read it.
var ErrHeadMoved = fmt.Errorf("%w: the workspace was changed by another process", errdefs.ErrStale)

// Checkpoint is a labelled, immutable tree root of a workspace.
type Checkpoint struct {
	ID          string
	WorkspaceID string
	Label       string
	Root        cas.Hash
	CreatedAt   time.Time
	// Kind is "" (CheckpointUser) for the checkpoints users take, or one
	// of the kinds merges keep (see CheckpointBase…). Every kind is a root
	// of garbage collection and goes with its workspace.
	Kind string
	// Source is the workspace whose state a CheckpointBase or
	// CheckpointMerged checkpoint holds ("" otherwise).
	Source string
}

// Checkpoint kinds.
const (
	// CheckpointUser is a checkpoint a user or tool took.
	CheckpointUser = ""
	// CheckpointBase is the state a fork started from (Source: the
	// workspace it was forked from).
	CheckpointBase = "base"
	// CheckpointMerged is a state a merge brought into the workspace
	// (Source: the workspace it came from): the next merge base of the two.
	CheckpointMerged = "merged"
	// CheckpointConflict keeps a version an unfinished merge's conflicts
	// refer to (Label "base", "ours" or "theirs").
	CheckpointConflict = "conflict"
)

// Staged is one staging row: a pending mutation of a workspace's key space
// that reads consult before the tree. Deleted rows are tombstones.
type Staged struct {
	Key     []byte
	Value   []byte
	Deleted bool
	// Seq orders mutations of one workspace; a fold removes the rows whose
	// Seq it applied.
	Seq int64
}

// IntegrityChecker is implemented by drivers that can verify their own
// storage beyond the objects forkspace reads (for SQLite, every page of
// the file). CheckIntegrity returns errdefs.ErrCorrupt describing damage,
// and other errors for failures to run the check. fsck calls it; opening a
// store does not, so that opening costs the same at any size.
type IntegrityChecker interface {
	CheckIntegrity(ctx context.Context) error
}

// Syncer is implemented by stores whose committed Updates survive the
// death of the process at once but a power loss only after a barrier
// (sqlitemeta: synchronous=NORMAL). Sync makes every Update committed
// before the call durable. A store without it is durable at commit.
type Syncer interface {
	Sync(ctx context.Context) error
}

// Sync makes the Updates s committed so far durable: s.Sync when s is a
// Syncer, else nothing (its commits already are).
func Sync(ctx context.Context, s Store) error {
	if y, ok := s.(Syncer); ok {
		return y.Sync(ctx)
	}
	return nil
}

// Listener is implemented by a Store several processes can share
// (PostgreSQL). Listen calls fn with every notification on the channels
// until ctx ends, and with a zero Notification each time it (re)connects
// after a failure: notifications sent meanwhile are lost, so the caller
// treats everything it mirrors as possibly changed. Listen returns ctx's
// error; it retries failures itself.
type Listener interface {
	Listen(ctx context.Context, channels []string, fn func(Notification)) error
}

// Notification is one notice from another process sharing the store.
type Notification struct {
	Channel string
	Payload string
}

// Channels of the notifications a shared store's transactions send when
// they commit (pgmeta migration 0003).
const (
	// ChannelHeads carries "ID GEN" when a workspace's head generation
	// moves to GEN (Tx.AdvanceHead) and "ID -1" when it is deleted.
	ChannelHeads = "forkspace_heads"
	// ChannelAudit carries the sequence number of each new audit entry.
	ChannelAudit = "forkspace_audit"
)

// Locker is implemented by a Store several processes can share: locks
// that exclude across processes. Lock blocks until it holds the lock
// named key, shared or exclusive, or ctx ends; unlock releases it. A lost
// connection releases the lock with it.
type Locker interface {
	Lock(ctx context.Context, key string, shared bool) (unlock func(), err error)
}
