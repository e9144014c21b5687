package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/feed"
	"github.com/forkspace/forkspace/provider"
)

// Limits applied when the corresponding Options field is zero.
const (
	DefaultReadLines     = 2000
	DefaultReadBytes     = 64 << 10
	DefaultGrepFileBytes = 8 << 20
	DefaultGrepResults   = 100
	DefaultListEntries   = 200
	DefaultGlobResults   = 500
	DefaultExecOutput    = 32 << 10
)

// DefaultIgnore lists the directories glob and grep skip unless the
// search starts inside one of them.
var DefaultIgnore = []string{".git", "node_modules", ".hg", ".svn", "__pycache__", ".venv", ".cache"}

// Options configure a Set. The zero value exposes every tool with the
// default limits, without audit or automatic checkpoints.
type Options struct {
	// ReadOnly exposes only the tools that do not change the workspace.
	ReadOnly bool
	// AutoCheckpoint takes a checkpoint before each mutating call (when the
	// workspace has the snapshot module), so the call can be rewound.
	AutoCheckpoint bool
	// Recorder receives an audit entry for every mutating call (nil: no
	// audit). The actor is taken from the context (audit.WithActor).
	Recorder audit.Recorder
	// MaxReadBytes caps the text one read returns.
	MaxReadBytes int
	// MaxGrepFileBytes is the largest file grep searches.
	MaxGrepFileBytes int64
	// Ignore lists directory names glob and grep prune (nil:
	// DefaultIgnore).
	Ignore []string
	// ProgressInterval is how often a running exec reports its progress
	// under WithProgress (default 10 s).
	ProgressInterval time.Duration
	// Feed is the store's change feed; with it the set has the watch
	// tool (the workspaces' IDs must be the store's).
	Feed *feed.Feed
}

// Result is the outcome of a tool call: text for the model, whether it
// reports a failure, and for tools with an OutputSchema the same outcome as
// a JSON value.
type Result struct {
	Text    string
	IsError bool
	// Structured is the result as a value that encodes to a JSON object
	// matching the tool's OutputSchema (MCP structured content); nil for
	// tools without one and for failures.
	Structured any
}

// Tool is one model-facing tool.
type Tool struct {
	Name        string
	Description string
	// InputSchema is the JSON schema of the arguments (an object).
	InputSchema *jsonschema.Schema
	// OutputSchema is the JSON schema of Result.Structured (an object), nil
	// for tools that return text only.
	OutputSchema *jsonschema.Schema
	// ReadOnly reports that the tool never changes a workspace.
	ReadOnly bool
	run      func(ctx context.Context, t Target, args json.RawMessage) (string, any, error)
}

// Call runs the tool with JSON arguments against t. Failures, including
// malformed arguments and panics, come back as a Result with IsError.
func (tl *Tool) Call(ctx context.Context, t Target, args json.RawMessage) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			res = Result{Text: fmt.Sprintf("%s failed: internal error: %v", tl.Name, r), IsError: true}
		}
	}()
	text, structured, err := tl.run(ctx, t, args)
	if err != nil {
		return Result{Text: describe(tl.Name, err), IsError: true}
	}
	return Result{Text: text, Structured: structured}
}

// Set is a tool set. It is safe for concurrent use.
type Set struct {
	opts   Options
	tools  []*Tool
	byName map[string]*Tool
	locks  [64]sync.Mutex // serialize read-modify-write of one path
	seed   maphash.Seed
	runs   runs // background execs
}

// New returns the tool set opts describe.
func New(opts Options) *Set {
	if opts.MaxReadBytes <= 0 {
		opts.MaxReadBytes = DefaultReadBytes
	}
	if opts.MaxGrepFileBytes <= 0 {
		opts.MaxGrepFileBytes = DefaultGrepFileBytes
	}
	if opts.Ignore == nil {
		opts.Ignore = DefaultIgnore
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = progressEvery
	}
	s := &Set{opts: opts, byName: map[string]*Tool{}, seed: maphash.MakeSeed()}
	s.addFileTools()
	s.addSearchTools()
	s.addSnapshotTools()
	s.addMergeTools()
	s.addBranchTools()
	s.addHistoryTool()
	s.addExec()
	s.addRunTools()
	s.addWatch()
	return s
}

// Tools returns the tools of the set in a stable order.
func (s *Set) Tools() []*Tool { return slices.Clone(s.tools) }

// Tool returns the named tool.
func (s *Set) Tool(name string) (*Tool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// Call runs the named tool; an unknown name is an error Result listing the
// tools.
func (s *Set) Call(ctx context.Context, t Target, name string, args json.RawMessage) Result {
	tl, ok := s.byName[name]
	if !ok {
		names := make([]string, len(s.tools))
		for i, t := range s.tools {
			names[i] = t.Name
		}
		return Result{Text: fmt.Sprintf("unknown tool %q; available tools: %v", name, names), IsError: true}
	}
	return tl.Call(ctx, t, args)
}

// lock serializes read-modify-write calls on one path of one workspace and
// returns the unlock function.
func (s *Set) lock(wsID, path string) func() {
	m := &s.locks[maphash.String(s.seed, wsID+"\x00"+path)%uint64(len(s.locks))]
	m.Lock()
	return m.Unlock
}

// kind classifies a tool for the read-only profile and for audit.
type kind int

const (
	readOnly   kind = iota
	mutating        // audited, checkpointed first when AutoCheckpoint is set
	snapshotOp      // audited, never auto-checkpointed (checkpoint, fork)
)

// call is the state of one tool invocation.
type call struct {
	set     *Set
	ws      provider.Workspace
	changed []string
	// checkpoint is the automatic checkpoint taken before the call.
	checkpoint string
	// detail is recorded in the call's audit entry (Entry.Detail).
	detail string
}

// changes records a workspace path the call changed.
func (c *call) changes(paths ...string) { c.changed = append(c.changed, paths...) }

// add registers a tool whose arguments decode into In.
func add[In any](s *Set, k kind, name, desc string, h func(ctx context.Context, c *call, in In) (string, error)) {
	register(s, k, name, desc, nil, func(ctx context.Context, c *call, in In) (string, any, error) {
		text, err := h(ctx, c, in)
		return text, nil, err
	})
}

// addStructured registers a tool whose arguments decode into In and whose
// result is also an Out (a struct: a JSON object).
func addStructured[In, Out any](s *Set, k kind, name, desc string, h func(ctx context.Context, c *call, in In) (string, Out, error)) {
	schema, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("tools: output schema of %s: %v", name, err))
	}
	plain(schema)
	register(s, k, name, desc, schema, func(ctx context.Context, c *call, in In) (string, any, error) {
		return h(ctx, c, in)
	})
}

// register adds a tool with output schema out (nil: text only).
func register[In any](s *Set, k kind, name, desc string, out *jsonschema.Schema, h func(ctx context.Context, c *call, in In) (string, any, error)) {
	if s.opts.ReadOnly && k != readOnly {
		return
	}
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tools: schema of %s: %v", name, err))
	}
	bounds := boundsOf(reflect.TypeFor[In]())
	document(schema, bounds)
	plain(schema)
	tl := &Tool{Name: name, Description: desc, InputSchema: schema, OutputSchema: out, ReadOnly: k == readOnly}
	tl.run = func(ctx context.Context, t Target, args json.RawMessage) (string, any, error) {
		var in In
		if err := decodeArgs(args, &in); err != nil {
			return "", nil, err
		}
		if err := check(reflect.ValueOf(in), bounds); err != nil {
			return "", nil, err
		}
		var (
			out, cp, note string
			structured    any
		)
		err := t.Use(ctx, func(ws provider.Workspace) error {
			c := &call{set: s, ws: ws}
			defer func() { cp = c.checkpoint }()
			if !mergeTools[name] {
				defer func() { note = conflictNote(ctx, ws) }()
			}
			if k == readOnly {
				var err error
				out, structured, err = h(ctx, c, in)
				return err
			}
			ac := audit.Call{WorkspaceID: ws.ID(), Tool: name, Args: in, Detail: func() string { return c.detail }, Command: commandOf(in)}
			if snaps := ws.Snapshots(); k == mutating && s.opts.AutoCheckpoint && snaps != nil {
				ac.Checkpoint = func(ctx context.Context, label string) (string, error) {
					cp, err := snaps.Checkpoint(ctx, label)
					c.checkpoint = cp.ID
					return cp.ID, err
				}
			}
			return audit.Run(ctx, s.opts.Recorder, ac, func(ctx context.Context) ([]string, error) {
				var err error
				out, structured, err = h(ctx, c, in)
				return c.changed, err
			})
		})
		if err != nil {
			return "", nil, err
		}
		if cp != "" {
			out += fmt.Sprintf("\n(checkpoint %s was taken before this call; restore it to undo)", cp)
		}
		return out + note, structured, nil
	}
	s.tools = append(s.tools, tl)
	s.byName[name] = tl
}

// decodeArgs decodes a JSON object of arguments, rejecting unknown fields.
func decodeArgs(args json.RawMessage, in any) error {
	if len(bytes.TrimSpace(args)) == 0 || bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		return argError("invalid arguments: %v", err)
	}
	return nil
}
