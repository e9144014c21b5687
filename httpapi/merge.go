package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/errdefs"
)

// The branching calls: merge, cherry-pick, restore of some paths, and the
// conflicts a merge leaves.

// MergeRequest merges state From into the workspace (forkspace.Merge).
type MergeRequest struct {
	From string `json:"from"`
	// Base is the common ancestor to use ("" finds it).
	Base string `json:"base,omitempty"`
	// Policy is record (the default), fail, ours or theirs.
	Policy forkspace.MergePolicy `json:"policy,omitempty"`
}

// CherryPickRequest brings Paths of state From into the workspace
// (forkspace.CherryPick): whole, or with Changes only what From changed
// there since the common ancestor.
type CherryPickRequest struct {
	From    string                `json:"from"`
	Paths   []string              `json:"paths"`
	Changes bool                  `json:"changes,omitempty"`
	Policy  forkspace.MergePolicy `json:"policy,omitempty"`
}

// RestorePathsRequest brings Paths back to a checkpoint's.
type RestorePathsRequest struct {
	Checkpoint string   `json:"checkpoint"`
	Paths      []string `json:"paths"`
}

// MergeReply is the outcome of a merge, cherry-pick or restore of paths.
// Stopped is set when the fail policy met conflicts and nothing changed
// (the conflicts are in Result); a Client returns that as an error
// matching errdefs.ErrConflict beside the result.
type MergeReply struct {
	Result  forkspace.MergeResult `json:"result"`
	Stopped string                `json:"stopped,omitempty"`
}

// ConflictResolution settles the merge conflict at Path (forkspace.Resolve): Take is
// ours, theirs, markers or content (with Content, base64 in JSON).
type ConflictResolution struct {
	Path    string         `json:"path"`
	Take    forkspace.Take `json:"take"`
	Content []byte         `json:"content,omitempty"`
}

// ConflictsLeft says how many conflicts are left (0: the merge is
// committed).
type ConflictsLeft struct {
	Left int `json:"conflicts_left"`
}

// mergeRoutes are the table entries of the branching calls.
func mergeRoutes() []route {
	return []route{
		{method: "POST", pattern: "/v1/workspaces/{ws}/merge", op: "merge", need: needWrite, summary: "Merge a state into the workspace, three-way; conflicts are recorded, settled by a policy, or stop it (policy fail)",
			in: typeOf[MergeRequest](), out: typeOf[MergeReply](), ok: 200, errs: []int{403}, handle: (*Server).merge},
		{method: "POST", pattern: "/v1/workspaces/{ws}/cherry-pick", op: "cherryPick", need: needWrite, summary: "Bring paths of a state into the workspace, whole or as their changes",
			in: typeOf[CherryPickRequest](), out: typeOf[MergeReply](), ok: 200, errs: []int{403}, handle: (*Server).cherryPick},
		{method: "POST", pattern: "/v1/workspaces/{ws}/restore-paths", op: "restorePaths", need: needWrite, summary: "Bring some paths back to a checkpoint's",
			in: typeOf[RestorePathsRequest](), out: typeOf[MergeReply](), ok: 200, errs: []int{403}, handle: (*Server).restorePaths},
		{method: "GET", pattern: "/v1/workspaces/{ws}/conflicts", op: "conflicts", need: needRead, summary: "The workspace's unresolved merge conflicts",
			out: typeOf[[]forkspace.Conflict](), ok: 200, handle: (*Server).conflicts},
		{method: "POST", pattern: "/v1/workspaces/{ws}/resolve", op: "resolve", need: needWrite, summary: "Settle one merge conflict; the last one commits the merge",
			in: typeOf[ConflictResolution](), out: typeOf[ConflictsLeft](), ok: 200, errs: []int{403}, handle: (*Server).resolve},
	}
}

// replyMerge answers a merge-like call: its result, and a fail policy's
// stop as Stopped rather than as an error, since the conflicts are the
// answer.
func replyMerge(w http.ResponseWriter, res forkspace.MergeResult, err error) error {
	var rep MergeReply
	switch {
	case err != nil && errors.Is(err, errdefs.ErrConflict) && len(res.Conflicts) > 0:
		rep.Stopped = err.Error()
	case err != nil:
		return err
	}
	rep.Result = res
	return reply(w, http.StatusOK, rep)
}

func (s *Server) merge(w http.ResponseWriter, r *http.Request) error {
	var req MergeRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	res, err := s.opts.API.Merge(r.Context(), r.PathValue("ws"), req)
	return replyMerge(w, res, err)
}

func (s *Server) cherryPick(w http.ResponseWriter, r *http.Request) error {
	var req CherryPickRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	res, err := s.opts.API.CherryPick(r.Context(), r.PathValue("ws"), req)
	return replyMerge(w, res, err)
}

func (s *Server) restorePaths(w http.ResponseWriter, r *http.Request) error {
	var req RestorePathsRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	res, err := s.opts.API.RestorePaths(r.Context(), r.PathValue("ws"), req)
	return replyMerge(w, res, err)
}

func (s *Server) conflicts(w http.ResponseWriter, r *http.Request) error {
	cs, err := s.opts.API.Conflicts(r.Context(), r.PathValue("ws"))
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, cs)
}

func (s *Server) resolve(w http.ResponseWriter, r *http.Request) error {
	var req ConflictResolution
	if err := decode(r, &req, false); err != nil {
		return err
	}
	left, err := s.opts.API.Resolve(r.Context(), r.PathValue("ws"), req)
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, ConflictsLeft{Left: left})
}

// Local: the library calls, audited.

func (l *Local) Merge(ctx context.Context, ws string, r MergeRequest) (res forkspace.MergeResult, err error) {
	if err := l.permitAll(ctx, auth.Read, r.From, r.Base); err != nil {
		return res, err
	}
	w, err := l.live(ctx, "merge", ws)
	if err != nil {
		return res, err
	}
	err = l.record(ctx, w.ID(), "merge", r, func(ctx context.Context) ([]string, error) {
		res, err = w.Merge(ctx, r.From, forkspace.MergeOptions{Base: r.Base, Policy: r.Policy})
		return res.Changed, err
	})
	return res, err
}

func (l *Local) CherryPick(ctx context.Context, ws string, r CherryPickRequest) (res forkspace.MergeResult, err error) {
	if err := l.permitAll(ctx, auth.Read, r.From); err != nil {
		return res, err
	}
	w, err := l.live(ctx, "cherry-pick", ws)
	if err != nil {
		return res, err
	}
	err = l.record(ctx, w.ID(), "cherry-pick", r, func(ctx context.Context) ([]string, error) {
		res, err = w.CherryPick(ctx, r.From, r.Paths, forkspace.CherryPickOptions{Changes: r.Changes, Policy: r.Policy})
		return res.Changed, err
	})
	return res, err
}

func (l *Local) RestorePaths(ctx context.Context, ws string, r RestorePathsRequest) (res forkspace.MergeResult, err error) {
	w, err := l.live(ctx, "restore", ws)
	if err != nil {
		return res, err
	}
	err = l.record(ctx, w.ID(), "restore-paths", r, func(ctx context.Context) ([]string, error) {
		res, err = w.RestorePaths(ctx, r.Checkpoint, r.Paths)
		return res.Changed, err
	})
	return res, err
}

func (l *Local) Conflicts(ctx context.Context, ws string) ([]forkspace.Conflict, error) {
	w, err := l.live(ctx, "conflicts", ws)
	if err != nil {
		return nil, err
	}
	cs, err := w.Conflicts(ctx)
	if cs == nil && err == nil {
		cs = []forkspace.Conflict{}
	}
	return cs, err
}

func (l *Local) Resolve(ctx context.Context, ws string, r ConflictResolution) (left int, err error) {
	w, err := l.live(ctx, "resolve", ws)
	if err != nil {
		return 0, err
	}
	args := map[string]string{"path": r.Path, "take": string(r.Take)}
	err = l.record(ctx, w.ID(), "resolve", args, func(ctx context.Context) ([]string, error) {
		return []string{r.Path}, w.Resolve(ctx, r.Path, forkspace.Resolution{Take: r.Take, Content: r.Content})
	})
	if err != nil {
		return 0, err
	}
	cs, err := w.Conflicts(ctx)
	return len(cs), err
}

// Client: the same over HTTP.

func (c *Client) mergeCall(ctx context.Context, u string, in any) (forkspace.MergeResult, error) {
	var rep MergeReply
	if err := c.call(ctx, "POST", u, in, &rep); err != nil {
		return rep.Result, err
	}
	if rep.Stopped != "" {
		return rep.Result, fmt.Errorf("%w: %s", errdefs.ErrConflict, rep.Stopped)
	}
	return rep.Result, nil
}

func (c *Client) Merge(ctx context.Context, name string, r MergeRequest) (forkspace.MergeResult, error) {
	return c.mergeCall(ctx, c.u(nil, ws(name), "merge"), r)
}

func (c *Client) CherryPick(ctx context.Context, name string, r CherryPickRequest) (forkspace.MergeResult, error) {
	return c.mergeCall(ctx, c.u(nil, ws(name), "cherry-pick"), r)
}

func (c *Client) RestorePaths(ctx context.Context, name string, r RestorePathsRequest) (forkspace.MergeResult, error) {
	return c.mergeCall(ctx, c.u(nil, ws(name), "restore-paths"), r)
}

func (c *Client) Conflicts(ctx context.Context, name string) (cs []forkspace.Conflict, err error) {
	err = c.call(ctx, "GET", c.u(nil, ws(name), "conflicts"), nil, &cs)
	return cs, err
}

func (c *Client) Resolve(ctx context.Context, name string, r ConflictResolution) (int, error) {
	var rep ConflictsLeft
	err := c.call(ctx, "POST", c.u(nil, ws(name), "resolve"), r, &rep)
	return rep.Left, err
}
