package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// Provider builds workspaces for agent sessions. A provider is constructed
// once and serves many sessions: it must keep no per-session state on
// itself (everything a session needs lives in the Workspace it returns).
type Provider interface {
	// ID names the provider; Config.Kind selects it in a Registry and
	// Ref.ProviderID records it.
	ID() string

	// Open builds the live workspace of session from cfg and returns it with
	// a serializable Ref from which Resolve can rebuild it. declared is the
	// set of capabilities the agent declared (nil: build everything); a
	// provider may skip modules that were not declared, but the returned
	// Ref.Capabilities must say exactly what was built. Failures are
	// *FailedError (set Transient for causes a retry may fix).
	Open(ctx context.Context, cfg Config, session Session, declared *Capabilities) (Workspace, Ref, error)

	// Resolve rebuilds a live workspace from a Ref after a restart, without
	// the original Config. It checks Ref.SchemaVersion with
	// CheckSchemaVersion. Failures are *FailedError.
	Resolve(ctx context.Context, ref Ref) (Workspace, error)
}

// Config is a provider configuration, discriminated by Kind. Its JSON form
// is an object with a "kind" field; Registry.DecodeConfig decodes it.
type Config interface {
	Kind() string
}

// Session identifies the agent session a workspace is opened for.
type Session struct {
	ID    string `json:"id"`
	Actor string `json:"actor,omitempty"`
}

// Capabilities are the modules a workspace offers.
type Capabilities struct {
	FS       bool `json:"fs,omitempty"`
	Shell    bool `json:"shell,omitempty"`
	Snapshot bool `json:"snapshot,omitempty"`
}

// Covers reports whether c provides every capability in want.
func (c Capabilities) Covers(want Capabilities) bool {
	return (!want.FS || c.FS) && (!want.Shell || c.Shell) && (!want.Snapshot || c.Snapshot)
}

// Ref is the serializable handle of a workspace: no secrets, no live
// objects. SchemaVersion is absent in legacy refs. Its JSON decoding is
// strict (UnmarshalJSON): unknown keys are refused, and the seed's
// spelling "schemaVersion" is read as schema_version.
type Ref struct {
	ProviderID    string          `json:"provider_id"`
	Payload       json.RawMessage `json:"ref"`
	Capabilities  Capabilities    `json:"capabilities"`
	SchemaVersion *int            `json:"schema_version,omitempty"`
}

// Workspace is a live workspace. Module accessors return nil for modules
// that were not built.
type Workspace interface {
	// ID identifies the workspace within its provider.
	ID() string
	FS() FS
	Shell() Shell
	Snapshots() Snapshots
	// Close ends the workspace's life for this session; the ref may still
	// be resolved later if the provider keeps the data.
	Close(ctx context.Context) error
}

// FS is the file module. Paths are workspace-relative, io/fs style ("."
// is the root); *vfs.FS implements it. Errors are io/fs and errdefs
// sentinels in *fs.PathError. A module method may fail with *EvictedError
// when the backing resource is gone (the session re-resolves and retries
// once).
type FS interface {
	Stat(ctx context.Context, name string) (fs.FileInfo, error)
	Lstat(ctx context.Context, name string) (fs.FileInfo, error)
	ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error)
	ReadFile(ctx context.Context, name string) ([]byte, error)
	WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error
	Mkdir(ctx context.Context, name string, perm fs.FileMode) error
	MkdirAll(ctx context.Context, name string, perm fs.FileMode) error
	Remove(ctx context.Context, name string) error
	RemoveAll(ctx context.Context, name string) error
	Rename(ctx context.Context, oldname, newname string) error
}

// FilesReader is an FS that reads many files in one request (*vfs.FS):
// ReadFiles reads names as ReadFile reads each and calls fn with each
// one's contents or error, in order; an error from fn stops it and is
// returned. fn must not modify data (it may be shared with a cache).
type FilesReader interface {
	ReadFiles(ctx context.Context, names []string, fn func(i int, data []byte, err error) error) error
}

// ReadFiles reads names from f as f.ReadFile reads each and calls fn with
// each one's contents or error, in order: in one request when f is a
// FilesReader, else one by one. fn must not modify data. An error from fn
// stops it and is returned.
func ReadFiles(ctx context.Context, f FS, names []string, fn func(i int, data []byte, err error) error) error {
	if r, ok := f.(FilesReader); ok {
		return r.ReadFiles(ctx, names, fn)
	}
	for i, name := range names {
		data, err := f.ReadFile(ctx, name)
		if err := fn(i, data, err); err != nil {
			return err
		}
	}
	return nil
}

// Shell is the command module.
type Shell interface {
	Exec(ctx context.Context, req ExecRequest) (ExecResult, error)
}

// ExecRequest is one command run against the workspace.
type ExecRequest struct {
	// Command is run by /bin/sh -c in the workspace's root directory.
	Command string            `json:"command"`
	Env     map[string]string `json:"env,omitempty"`
	// Timeout bounds the run (0: the shell's default).
	Timeout time.Duration `json:"timeout,omitempty"`
	// Network allows network access (off by default).
	Network bool `json:"network,omitempty"`
	// MaxOutput caps stdout and stderr each (0: the shell's default); the
	// excess is replaced by a truncation marker.
	MaxOutput int `json:"max_output,omitempty"`
	// Limits bound the run's resources; a zero field means the shell's
	// default, and a value above the shell's maximum is lowered to it.
	Limits Limits `json:"limits,omitzero"`
}

// Limits bound the resources of one run. Zero fields are unset.
type Limits struct {
	// CPUTime bounds the CPU time of the whole process tree.
	CPUTime time.Duration `json:"cpu_time,omitempty"`
	// Memory bounds the memory of the whole process tree in bytes.
	Memory int64 `json:"memory,omitempty"`
	// Processes bounds the processes and threads alive at once.
	Processes int `json:"processes,omitempty"`
	// OpenFiles bounds the open files of each process.
	OpenFiles int `json:"open_files,omitempty"`
	// Disk bounds how many bytes the work directory may grow by.
	Disk int64 `json:"disk,omitempty"`
}

// Usage is what a run consumed.
type Usage struct {
	CPUTime time.Duration `json:"cpu_time"`
	// PeakMemory is the most memory the run held at once, in bytes.
	PeakMemory int64 `json:"peak_memory"`
	// Processes is the most processes and threads alive at once (0 when
	// the shell cannot count them).
	Processes int `json:"processes,omitempty"`
	// DiskGrowth is how many bytes the work directory grew by.
	DiskGrowth int64 `json:"disk_growth"`
	// FilesChanged counts the paths the run changed (pulled or dropped).
	FilesChanged int `json:"files_changed"`
}

// ExecResult is what a command did.
type ExecResult struct {
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	TimedOut bool   `json:"timed_out,omitempty"`
	// Changed lists the workspace paths the command created, modified or
	// deleted, as pulled back into the workspace.
	Changed []Change `json:"changed,omitempty"`
	// Dropped lists changes that were not pulled back (read-only mounts,
	// ignored paths, conflicts kept local), with the reason.
	Dropped  []Change      `json:"dropped,omitempty"`
	Duration time.Duration `json:"duration"`
	// Killed names the limit that stopped the run ("memory limit 256 MiB",
	// "timeout 1m0s"); "" when the command ended on its own.
	Killed string `json:"killed,omitempty"`
	// Refused lists limits that refused a request without stopping the
	// run ("process limit 64: 12 forks refused").
	Refused []string `json:"refused,omitempty"`
	// Lingering counts processes still running when the command exited,
	// killed with the run. It may count fewer: the end of the sandbox's
	// pid namespace kills them too, and those already gone when the
	// run's group is read are not counted. None outlives the run.
	Lingering int `json:"lingering,omitempty"`
	// Limits are the limits the run had; Mechanism says how they were
	// enforced ("cgroup v2", "cgroup v1", "rlimit").
	Limits    Limits `json:"limits,omitzero"`
	Mechanism string `json:"mechanism,omitempty"`
	Usage     Usage  `json:"usage,omitzero"`
	// Queued is how long the run waited for the server's limit on
	// concurrent runs.
	Queued time.Duration `json:"queued,omitempty"`
	// PulledBack reports that the command's changes were applied to the
	// workspace, all of them at once (except those in Dropped for a
	// policy reason). When false after the command ran, none were: the
	// workspace is exactly as before, Changed is empty, Dropped lists
	// every change with the reason ("quota exceeded", …) and PullError
	// says what refused them (or Killed names the disk limit).
	PulledBack bool   `json:"pulled_back"`
	PullError  string `json:"pull_error,omitempty"`
}

// Ending says how a run ended: "exit code N", or "killed: " and the limit
// that stopped it.
func (r ExecResult) Ending() string {
	if r.Killed != "" {
		return "killed: " + r.Killed
	}
	return fmt.Sprintf("exit code %d", r.ExitCode)
}

// String describes the usage ("1.20s CPU, 3.4 MiB peak memory, 4
// processes at most, 0.0 MiB written, 2 files changed").
func (u Usage) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%.2fs CPU, %s peak memory", u.CPUTime.Seconds(), mib(u.PeakMemory))
	if u.Processes > 0 {
		fmt.Fprintf(&b, ", %d processes at most", u.Processes)
	}
	fmt.Fprintf(&b, ", %s written, %d files changed", mib(u.DiskGrowth), u.FilesChanged)
	return b.String()
}

// mib formats a byte count in MiB with one decimal.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// Change is one path a command changed.
type Change struct {
	Path   string `json:"path"`
	Op     string `json:"op"` // "created", "modified", "deleted"
	Reason string `json:"reason,omitempty"`
}

// Snapshots is the checkpoint module.
type Snapshots interface {
	Checkpoint(ctx context.Context, label string) (Checkpoint, error)
	Checkpoints(ctx context.Context) ([]Checkpoint, error)
	Restore(ctx context.Context, checkpoint string) error
	// Diff compares two states of this workspace: "" is the live state,
	// ParentState the state it was forked from (fs.ErrNotExist when it is
	// not a fork or its parent is gone), a checkpoint ID or label otherwise.
	// Unified adds text diffs.
	Diff(ctx context.Context, from, to string, unified bool) ([]DiffEntry, error)
	// Fork creates a new workspace from the live state and returns its ref.
	Fork(ctx context.Context, name string) (Ref, error)
}

// ParentState names, for Snapshots.Diff, the state a fork was forked
// from: its origin checkpoint, or its parent's live head (as the CLI's
// one-argument diff). A checkpoint labelled so is named by its ID.
const ParentState = "@parent"

// Checkpoint describes a checkpoint.
type Checkpoint struct {
	ID        string    `json:"id"`
	Label     string    `json:"label,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// DiffEntry is one step of the changes between two states, as vfs.Change
// (which documents the order and the paths): applied in order to the from
// state, the entries yield the to state.
type DiffEntry struct {
	Op      string `json:"op" jsonschema:"added, modified, deleted or renamed"`
	Path    string `json:"path" jsonschema:"the entry the step acts on (deleted: the entry removed; otherwise the entry as the step leaves it)"`
	OldPath string `json:"old_path,omitempty" jsonschema:"renamed: the entry moved"`
	Type    string `json:"type,omitempty" jsonschema:"file, dir or symlink"`
	// Link and Replaced are vfs.Change's.
	Link     string `json:"link,omitempty" jsonschema:"added or replaced: another hard link of the same file, already in place"`
	Replaced bool   `json:"replaced,omitempty" jsonschema:"modified: a new file or symlink took the path's place"`
	Unified  string `json:"unified,omitempty" jsonschema:"unified diff of a text file's contents"`
}
