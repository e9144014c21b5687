package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/tools"
)

// WorkspaceHeader carries the workspace an HTTP session works in; the
// handler sets it from the ?workspace= query parameter.
const WorkspaceHeader = "X-Forkspace-Workspace"

// declName is the name of the one workspace an MCP session declares.
const declName = "workspace"

// Options configure a Server. Manager and Config are required.
type Options struct {
	// Manager opens, caches and closes the sessions' workspaces.
	Manager *provider.Manager
	// Config returns the provider configuration of a workspace name; ""
	// asks for a workspace created for the session.
	Config func(workspace string) provider.Config
	// Capabilities the tools declare (nil: whatever the provider builds).
	Capabilities *provider.Capabilities
	// Tools configures the tool set (read-only profile, audit…).
	Tools   tools.Options
	Logger  *slog.Logger
	Version string
	// SessionTimeout closes an HTTP session (and its workspace) after this
	// long without a request (default DefaultSessionTimeout).
	SessionTimeout time.Duration
	// Discard, if set, deletes the workspace of a session that named none
	// (Config("")) when the session ends, unless the session asked to
	// keep it (?keep=true): such sessions get an ephemeral workspace, not
	// a new stored one each time. ctx carries the session's tenant.
	Discard func(ctx context.Context, session string) error
}

// DefaultSessionTimeout is the idle time after which an HTTP session ends.
const DefaultSessionTimeout = 30 * time.Minute

// Server is an MCP server over a tool set. It is safe for concurrent use
// by many sessions.
type Server struct {
	opts Options
	log  *slog.Logger
	mcp  *mcp.Server
	set  *tools.Set

	mu       sync.Mutex
	bound    *sync.Cond // on mu: signalled when Serve records a binding
	bindings map[*mcp.ServerSession]*binding
}

// binding is the workspace of one MCP session.
type binding struct {
	session   provider.Session
	target    tools.Target
	workspace string // "" for the session's own
	ephemeral bool   // its own workspace is discarded at the end
	tenant    string
}

// New returns a Server. It panics if Manager or Config is nil.
func New(opts Options) *Server {
	if opts.Manager == nil || opts.Config == nil {
		panic("mcpserver.New: Manager and Config are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	s := &Server{
		opts:     opts,
		log:      opts.Logger.With("component", "mcpserver"),
		set:      tools.New(opts.Tools),
		bindings: map[*mcp.ServerSession]*binding{},
	}
	s.bound = sync.NewCond(&s.mu)
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "forkspace", Version: opts.Version}, &mcp.ServerOptions{
		Logger: s.log,
		Instructions: "Tools over one forkspace workspace: a durable file tree you can checkpoint, restore, diff and fork. " +
			"Paths are relative to the workspace root. Take a checkpoint before risky changes.",
	})
	for _, tl := range s.set.Tools() {
		mt := &mcp.Tool{
			Name:        tl.Name,
			Description: tl.Description,
			InputSchema: tl.InputSchema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: tl.ReadOnly, IdempotentHint: tl.ReadOnly,
				DestructiveHint: boolPtr(!tl.ReadOnly), OpenWorldHint: boolPtr(false)},
		}
		if tl.OutputSchema != nil {
			mt.OutputSchema = tl.OutputSchema
		}
		s.mcp.AddTool(mt, s.handler(tl))
	}
	return s
}

func boolPtr(b bool) *bool { return &b }

// handler adapts a tool to the MCP SDK: failures become isError results.
func (s *Server) handler(tl *tools.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		b, err := s.bind(req)
		if err == nil {
			ctx, err = b.scoped(ctx, req, tl)
		}
		var res tools.Result
		if err != nil {
			res = tools.Result{Text: err.Error(), IsError: true}
		} else {
			actor := audit.Actor{Name: "mcp", Session: b.session.ID}
			if ci := req.Session.InitializeParams(); ci != nil && ci.ClientInfo != nil && ci.ClientInfo.Name != "" {
				actor.Name = "mcp:" + ci.ClientInfo.Name
			}
			if scope := scopeOf(req); scope != nil {
				actor.Name += " token:" + scope.TokenID
			}
			if token := req.Params.GetProgressToken(); token != nil {
				ctx = tools.WithProgress(ctx, func(n float64, msg string) {
					req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: msg})
				})
			}
			res = tl.Call(audit.WithActor(ctx, actor), b.target, req.Params.Arguments)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Text}}, StructuredContent: res.Structured, IsError: res.IsError}, nil
	}
}

// bind returns the binding of the request's session, creating it from the
// workspace header (HTTP sessions are bound on their first tool call).
func (s *Server) bind(req *mcp.CallToolRequest) (*binding, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.bindings[req.Session]; ok {
		return b, nil
	}
	id := req.Session.ID()
	for id == "" {
		// A session of Serve: its binding is recorded right after Connect
		// returns, which a fast client can race.
		if b, ok := s.bindings[req.Session]; ok {
			return b, nil
		}
		s.bound.Wait()
	}
	var name string
	keep := false
	if req.Extra != nil && req.Extra.Header != nil {
		name = req.Extra.Header.Get(WorkspaceHeader)
		keep = req.Extra.Header.Get(keepHeader) == "true"
	}
	b := s.newBinding(provider.Session{ID: "mcp-" + id}, name)
	b.ephemeral = name == "" && !keep
	if scope := scopeOf(req); scope != nil && scope.Tenant != auth.AnyTenant {
		b.tenant = scope.Tenant
	}
	s.bindings[req.Session] = b
	go func(ss *mcp.ServerSession) {
		ss.Wait()
		s.unbind(ss)
	}(req.Session)
	return b, nil
}

func (s *Server) newBinding(sess provider.Session, workspace string) *binding {
	d := provider.Declaration{Name: declName, Config: s.opts.Config(workspace), Capabilities: s.opts.Capabilities}
	return &binding{session: sess, target: tools.Session(s.opts.Manager, sess, d), workspace: workspace}
}

// scoped returns ctx for a tool call of the binding: its tenant, and the
// scope of the call's request, checked against the call (allowCall).
func (b *binding) scoped(ctx context.Context, req *mcp.CallToolRequest, tl *tools.Tool) (context.Context, error) {
	scope := scopeOf(req)
	if scope == nil {
		return forkspace.WithTenant(ctx, b.tenant), nil
	}
	ctx = forkspace.Scoped(ctx, *scope)
	ws := b.workspace
	if ws == "" {
		ws = "session-x" // connect checked that the token reaches the session's own
	}
	if err := allowCall(scope, forkspace.TenantFrom(ctx), ws, tl, req.Params.Arguments); err != nil {
		return ctx, err
	}
	return ctx, nil
}

// unbind ends a session's binding, kills the background runs it started
// and closes its provider session.
func (s *Server) unbind(ss *mcp.ServerSession) {
	s.mu.Lock()
	b, ok := s.bindings[ss]
	delete(s.bindings, ss)
	s.mu.Unlock()
	if !ok {
		return
	}
	s.set.EndRuns(b.session.ID)
	if err := s.opts.Manager.CloseSession(context.Background(), b.session.ID); err != nil {
		s.log.Warn("close session", "session", b.session.ID, "err", err)
	}
	if b.ephemeral && s.opts.Discard != nil {
		if err := s.opts.Discard(forkspace.WithTenant(context.Background(), b.tenant), b.session.ID); err != nil {
			s.log.Warn("discard the session's workspace", "session", b.session.ID, "err", err)
		}
	}
}

// Serve runs one MCP session over t (for example &mcp.StdioTransport{})
// working in workspace ("" for one created for the session) until the
// client disconnects or ctx ends; then it closes the session's workspace.
func (s *Server) Serve(ctx context.Context, t mcp.Transport, workspace string) error {
	var raw [8]byte
	rand.Read(raw[:])
	sess := provider.Session{ID: "mcp-stdio-" + hex.EncodeToString(raw[:])}
	ss, err := s.mcp.Connect(ctx, Draining(t), nil)
	if err != nil {
		return fmt.Errorf("serve mcp: %w", err)
	}
	s.mu.Lock()
	b := s.newBinding(sess, workspace)
	b.ephemeral = workspace == ""
	s.bindings[ss] = b
	s.bound.Broadcast()
	s.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		ss.Close()
		err = <-done
	}
	s.unbind(ss)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// Handler returns the streamable HTTP handler of the server; mount it at
// /mcp (behind httpapi.Authenticate when the store has tokens). Clients
// choose their workspace with ?workspace=NAME on the endpoint URL, checked
// at connect (connect); ?keep=true keeps the workspace of a session that
// names none.
func (s *Server) Handler() http.Handler {
	h := answerAtEdge(withTokenInfo(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Logger: s.log, SessionTimeout: s.opts.SessionTimeout, MaxRequestBodyBytes: MaxRequestBytes})))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(keepHeader)
		if r.URL.Query().Get(KeepParam) == "true" {
			r.Header.Set(keepHeader, "true")
		}
		r, status, msg := connect(r)
		if status != 0 {
			http.Error(w, msg, status)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// keepHeader carries ?keep= to the session's binding.
const keepHeader = "X-Forkspace-Keep"
