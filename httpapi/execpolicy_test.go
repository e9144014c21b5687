package httpapi_test

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/execpolicy"
	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/provider"
)

// TestExecPolicyREST: a workspace's exec policy is set, read back and
// cleared through the API (in process and over HTTP); a fork keeps it; a
// checkpoint has none to set; a bad policy is refused (400, or
// fs.ErrInvalid) and changes nothing.
func TestExecPolicyREST(t *testing.T) {
	both(t, func(t *testing.T, e *env, api httpapi.API) {
		ctx := context.Background()
		_, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
		must(t, err)
		if p, err := api.ExecPolicy(ctx, "w"); err != nil || !p.IsZero() {
			t.Fatalf("new workspace's policy %v, %v", p, err)
		}
		n, err := execpolicy.ParseNetwork("registry.example:443")
		must(t, err)
		want := execpolicy.Policy{Network: &n, Limits: provider.Limits{Processes: 64}}
		got, err := api.SetExecPolicy(ctx, "w", want)
		if err != nil || got.String() != want.String() {
			t.Fatalf("set: %v, %v", got, err)
		}
		_, err = api.ForkWorkspace(ctx, "w", httpapi.ForkRequest{Name: "f"})
		must(t, err)
		if p, err := api.ExecPolicy(ctx, "f"); err != nil || p.String() != want.String() {
			t.Errorf("fork's policy %v, %v", p, err)
		}
		if _, err := api.SetExecPolicy(ctx, "w", execpolicy.Policy{Limits: provider.Limits{Memory: -1}}); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("negative memory cap: %v, want fs.ErrInvalid", err)
		}
		_, err = api.Checkpoint(ctx, "w", "cp")
		must(t, err)
		if _, err := api.SetExecPolicy(ctx, "w@cp", execpolicy.Policy{}); err == nil {
			t.Error("set the policy of a checkpoint")
		}
		if p, err := api.ExecPolicy(ctx, "w"); err != nil || p.String() != want.String() {
			t.Errorf("after refused changes: %v, %v", p, err)
		}
		if p, err := api.SetExecPolicy(ctx, "w", execpolicy.Policy{}); err != nil || !p.IsZero() {
			t.Errorf("clear: %v, %v", p, err)
		}
	})
	e := newEnv(t)
	_, err := e.client.CreateWorkspace(context.Background(), httpapi.CreateRequest{Name: "w"})
	must(t, err)
	for _, body := range []string{`{"network":"everything"}`, `{"network":"h:0"}`, `{"limits":{"memory":"lots"}}`, `{"colour":1}`} {
		st, _, b := e.do(t, "PUT", "/v1/workspaces/w/exec-policy", strings.NewReader(body))
		if st != 400 || apiErr(t, b).Code != "bad_request" {
			t.Errorf("PUT %s: %d %s", body, st, b)
		}
	}
	if p, err := e.client.ExecPolicy(context.Background(), "w"); err != nil || !p.IsZero() {
		t.Errorf("after bad requests: %v, %v", p, err)
	}
}
