package localprovider

import (
	"context"
	"strings"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/provider"
)

var _ provider.Historian = (*Workspace)(nil)

// History implements provider.Historian.
func (x *Workspace) History(ctx context.Context, limit int) ([]provider.Step, error) {
	steps, err := x.p.st.History(ctx, x.w.ID(), forkspace.HistoryOptions{Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]provider.Step, len(steps))
	for i, s := range steps {
		out[i] = provider.Step{Seq: s.Seq, Time: s.Time, Tool: s.Tool, Error: s.Error, Changed: s.Changed, Command: s.Command,
			State: refOf(s.State), Back: refOf(s.Back)}
	}
	return out, nil
}

// refOf drops the workspace part of a state ("NAME@REF" → "REF").
func refOf(state string) string {
	_, ref, _ := strings.Cut(state, "@")
	return ref
}
