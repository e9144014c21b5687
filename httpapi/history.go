package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/errdefs"
)

// The history of a workspace: its audited steps and the state each left
// (forkspace.Store.History).

var (
	pHistoryLimit  = param{"limit", "query", "integer", "most steps (default 20)"}
	pHistoryBefore = param{"before", "query", "integer", "only steps with a sequence number below this (paging)"}
)

// historyRoutes are the table entries of the history calls.
func historyRoutes() []route {
	return []route{
		{method: "GET", pattern: "/v1/workspaces/{ws}/history", op: "history", need: needRead,
			summary: "The workspace's audited steps, newest first, with changed paths and the state each left (WS@audit:SEQ, WS@~N)",
			params:  []param{pHistoryLimit, pHistoryBefore}, out: typeOf[[]forkspace.Step](), ok: 200, errs: []int{400}, handle: (*Server).history},
	}
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) error {
	limit, err := qInt(r, "limit")
	if err != nil {
		return err
	}
	before, err := qInt(r, "before")
	if err != nil {
		return err
	}
	if limit < 0 || before < 0 {
		return fmt.Errorf("history: %w: limit and before must not be negative", ErrBadRequest)
	}
	steps, err := s.opts.API.History(r.Context(), r.PathValue("ws"), forkspace.HistoryOptions{Limit: int(limit), Before: before})
	if err != nil {
		return err
	}
	for i := range steps {
		steps[i].Error = errdefs.Redact(steps[i].Error) // as recorded on the host
	}
	return reply(w, http.StatusOK, steps)
}

// History lists the audited steps of workspace ws (a live head).
func (l *Local) History(ctx context.Context, ws string, opts forkspace.HistoryOptions) ([]forkspace.Step, error) {
	w, err := l.live(ctx, "history", ws)
	if err != nil {
		return nil, err
	}
	return l.st.History(ctx, w.ID(), opts)
}

func (c *Client) History(ctx context.Context, name string, opts forkspace.HistoryOptions) (steps []forkspace.Step, err error) {
	q := url.Values{}
	if opts.Limit != 0 {
		q.Set("limit", strconv.Itoa(opts.Limit))
	}
	if opts.Before != 0 {
		q.Set("before", strconv.FormatInt(opts.Before, 10))
	}
	return steps, c.call(ctx, "GET", c.u(q, ws(name), "history"), nil, &steps)
}
