package localprovider_test

import (
	"context"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/localprovider"
)

// closingShell is a shell module with sandbox.Shell's Close() error.
type closingShell struct{ closed bool }

func (s *closingShell) Exec(context.Context, provider.ExecRequest) (provider.ExecResult, error) {
	return provider.ExecResult{}, nil
}

func (s *closingShell) Close() error { s.closed = true; return nil }

// TestCloseClosesShell: closing a workspace closes its shell module when
// that has Close() (sandbox.Shell's watches were left open before).
func TestCloseClosesShell(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t, t.TempDir())
	defer st.Close()
	sh := &closingShell{}
	p := localprovider.New(st, localprovider.Options{Logger: quiet,
		Shell: func(context.Context, *forkspace.Workspace) (provider.Shell, error) { return sh, nil }})
	ws, _, err := p.Open(ctx, localprovider.Config{}, provider.Session{ID: "s"}, &provider.Capabilities{Shell: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Close(ctx); err != nil || !sh.closed {
		t.Errorf("Close = %v, shell closed %v", err, sh.closed)
	}
}
