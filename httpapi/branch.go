package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// Best-of-N: fork a workspace N ways, compare states pairwise, promote
// one fork and delete the others.

// ForkNRequest forks a workspace N ways (forkspace.ForkN): Names, or
// PREFIX-K names (Prefix defaults to the workspace's name).
type ForkNRequest struct {
	N      int        `json:"n"`
	Names  []string   `json:"names,omitempty"`
	Prefix string     `json:"prefix,omitempty"`
	Quota  meta.Quota `json:"quota,omitzero"`
}

// PromoteRequest promotes a fork (forkspace.Promote): merged into its
// parent with Policy, or with Head made the parent's head; Keep keeps the
// other forks.
type PromoteRequest struct {
	Head   bool                  `json:"head,omitempty"`
	Policy forkspace.MergePolicy `json:"policy,omitempty"`
	Keep   bool                  `json:"keep,omitempty"`
}

// branchRoutes are the table entries of best-of-N.
func branchRoutes() []route {
	return []route{
		{method: "POST", pattern: "/v1/workspaces/{ws}/fork-n", op: "forkN", need: needRead, summary: "Fork a workspace's live state N ways in one transaction; the forks, by name",
			in: typeOf[ForkNRequest](), out: typeOf[[]forkspace.Info](), ok: 201, errs: []int{409}, handle: (*Server).forkN},
		{method: "GET", pattern: "/v1/compare", op: "compare", need: needRead, summary: "Diff 2 to 16 states pairwise: a change-count matrix and each pair's changes",
			params: []param{{"state", "query", "string", "a state to compare (repeated, 2 to 16 times)"},
				{"unified", "query", "boolean", "add unified diffs of text files"}},
			out: typeOf[forkspace.Comparison](), ok: 200, errs: []int{400, 404}, handle: (*Server).compare},
		{method: "POST", pattern: "/v1/workspaces/{ws}/promote", op: "promote", need: needWrite, summary: "Merge a fork into its parent (or make it the parent's head) and delete the other forks of the same fork-n",
			in: typeOf[PromoteRequest](), inOptional: true, out: typeOf[forkspace.PromoteResult](), ok: 200, errs: []int{403, 409}, handle: (*Server).promote},
	}
}

func (s *Server) forkN(w http.ResponseWriter, r *http.Request) error {
	var req ForkNRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	infos, err := s.opts.API.ForkN(r.Context(), r.PathValue("ws"), req)
	if err != nil {
		return err
	}
	return reply(w, http.StatusCreated, infos)
}

func (s *Server) compare(w http.ResponseWriter, r *http.Request) error {
	unified, err := qBool(r, "unified")
	if err != nil {
		return err
	}
	states := r.URL.Query()["state"]
	if len(states) < 2 {
		return fmt.Errorf("compare: %w: give at least two state parameters", ErrBadRequest)
	}
	cmp, err := s.opts.API.Compare(r.Context(), states, unified)
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, cmp)
}

func (s *Server) promote(w http.ResponseWriter, r *http.Request) error {
	var req PromoteRequest
	if err := decode(r, &req, true); err != nil {
		return err
	}
	res, err := s.opts.API.Promote(r.Context(), r.PathValue("ws"), req)
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, res)
}

// Local: the library calls, audited.

func (l *Local) ForkN(ctx context.Context, ws string, r ForkNRequest) (infos []forkspace.Info, err error) {
	w, err := l.live(ctx, "fork", ws)
	if err != nil {
		return nil, err
	}
	// The names are vetted for the caller's token before they are taken.
	names := r.Names
	if len(names) == 0 {
		prefix := r.Prefix
		if prefix == "" {
			prefix = w.Name()
		}
		if names, err = l.st.FreeNames(ctx, prefix, r.N); err != nil {
			return nil, err
		}
	}
	for _, name := range names {
		if err := forkspace.ValidName(name); err != nil {
			return nil, err
		}
	}
	if err := l.permitAll(ctx, auth.Write, names...); err != nil {
		return nil, err
	}
	err = l.record(ctx, w.ID(), "fork-n", r, func(ctx context.Context) ([]string, error) {
		forks, err := w.ForkN(ctx, r.N, forkspace.ForkNOptions{Names: names, Quota: r.Quota})
		for _, f := range forks {
			info, ierr := f.Info(ctx)
			if ierr != nil {
				return nil, ierr
			}
			infos = append(infos, info)
		}
		return nil, err
	})
	return infos, err
}

func (l *Local) Compare(ctx context.Context, states []string, unified bool) (forkspace.Comparison, error) {
	if err := l.permitAll(ctx, auth.Read, states...); err != nil {
		return forkspace.Comparison{}, err
	}
	return l.st.Compare(ctx, states, vfs.DiffOptions{Unified: unified})
}

func (l *Local) Promote(ctx context.Context, winner string, r PromoteRequest) (res forkspace.PromoteResult, err error) {
	w, err := l.live(ctx, "promote", winner)
	if err != nil {
		return res, err
	}
	// The promotion changes the parent and deletes the siblings: the
	// caller's token must be allowed to write each.
	id := w.ParentID()
	if id == "" {
		id = w.ID()
	}
	if _, ok := auth.FromContext(ctx); ok {
		affected := []string{id}
		if !r.Keep {
			others, err := l.st.Siblings(ctx, w.ID())
			if err != nil {
				return res, err
			}
			affected = append(affected, others...)
		}
		if err := l.permitAll(ctx, auth.Write, affected...); err != nil {
			return res, err
		}
	}
	err = l.record(ctx, id, "promote", map[string]any{"winner": winner, "request": r}, func(ctx context.Context) ([]string, error) {
		res, err = l.st.Promote(ctx, w.ID(), forkspace.PromoteOptions{Head: r.Head, Policy: r.Policy, Keep: r.Keep})
		if res.Merge != nil {
			return res.Merge.Changed, err
		}
		return []string{"."}, err
	})
	return res, err
}

// Client: the same over HTTP.

func (c *Client) ForkN(ctx context.Context, src string, r ForkNRequest) (infos []forkspace.Info, err error) {
	return infos, c.call(ctx, "POST", c.u(nil, ws(src), "fork-n"), r, &infos)
}

func (c *Client) Compare(ctx context.Context, states []string, unified bool) (cmp forkspace.Comparison, err error) {
	q := url.Values{"state": states}
	if unified {
		q.Set("unified", "true")
	}
	return cmp, c.call(ctx, "GET", c.u(q, "compare"), nil, &cmp)
}

func (c *Client) Promote(ctx context.Context, winner string, r PromoteRequest) (res forkspace.PromoteResult, err error) {
	return res, c.call(ctx, "POST", c.u(nil, ws(winner), "promote"), r, &res)
}
