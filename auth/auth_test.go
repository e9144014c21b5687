package auth_test

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/execpolicy"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/memmeta"
	"github.com/forkspace/forkspace/provider"
)

func newTokens(t *testing.T) *auth.Tokens {
	t.Helper()
	tk, err := auth.New(context.Background(), memmeta.New())
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func mustCreate(t *testing.T, tk *auth.Tokens, by *auth.Scope, r auth.Request) auth.Created {
	t.Helper()
	c, err := tk.Create(context.Background(), by, r)
	if err != nil {
		t.Fatalf("create %+v: %v", r, err)
	}
	return c
}

func mustVerify(t *testing.T, tk *auth.Tokens, secret string) auth.Scope {
	t.Helper()
	s, err := tk.Verify(context.Background(), secret)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return s
}

func wantUnauth(t *testing.T, tk *auth.Tokens, what, secret string) error {
	t.Helper()
	_, err := tk.Verify(context.Background(), secret)
	if !errors.Is(err, errdefs.ErrUnauthenticated) {
		t.Errorf("%s: verify = %v, want ErrUnauthenticated", what, err)
	}
	return err
}

// TestTokens: created, shown once, verified by hash; narrower tokens
// minted, wider ones refused; revocation and expiry cascade to children.
func TestTokens(t *testing.T) {
	ctx := context.Background()
	tk := newTokens(t)
	if tk.Enabled() {
		t.Fatal("enabled without tokens")
	}
	root := mustCreate(t, tk, nil, auth.Request{Tenant: "acme", Workspaces: "agent-*", Perms: auth.Read | auth.Write | auth.Exec, Label: "ci"})
	if !tk.Enabled() || !strings.HasPrefix(root.Token, auth.Prefix+root.ID+"_") || root.S3AccessKey != root.ID || root.S3SecretKey == "" {
		t.Fatalf("created %+v, enabled %v", root, tk.Enabled())
	}
	rs := mustVerify(t, tk, root.Token)
	if rs.Tenant != "acme" || rs.Pattern != "agent-*" || rs.Perms != auth.Read|auth.Write|auth.Exec || rs.TokenID != root.ID {
		t.Fatalf("scope %+v", rs)
	}
	// A wrong secret for a real ID and an unknown ID read the same.
	e1 := wantUnauth(t, tk, "wrong secret", root.Token[:len(root.Token)-1]+"x")
	e2 := wantUnauth(t, tk, "unknown id", auth.Prefix+"tk0000000000000000"+root.Token[len(auth.Prefix)+18:])
	if e1 != nil && e2 != nil && e1.Error() != e2.Error() {
		t.Errorf("a wrong secret says %q, an unknown ID %q", e1, e2)
	}
	for _, bad := range []string{"", "Bearer x", "fks_", root.Token + "x", strings.ToUpper(root.Token)} {
		wantUnauth(t, tk, "malformed "+bad, bad)
	}

	// Minting: narrower only.
	child := mustCreate(t, tk, &rs, auth.Request{Workspaces: "agent-1", Perms: auth.Read, ExpiresIn: time.Hour})
	cs := mustVerify(t, tk, child.Token)
	if cs.Tenant != "acme" || cs.Pattern != "agent-1" || cs.Perms != auth.Read || cs.ExpiresAt.IsZero() || child.Parent != root.ID {
		t.Fatalf("child %+v scope %+v", child, cs)
	}
	for _, wide := range []auth.Request{
		{Tenant: "other", Perms: auth.Read},
		{Workspaces: "*", Perms: auth.Read},
		{Workspaces: "agent*", Perms: auth.Read},
		{Workspaces: "other", Perms: auth.Read},
		{Workspaces: "agent-[12]", Perms: auth.Read},
		{Perms: auth.Admin},
		{Tenant: auth.AnyTenant, Perms: auth.Read},
	} {
		if _, err := tk.Create(ctx, &rs, wide); !errors.Is(err, fs.ErrPermission) {
			t.Errorf("root mints %+v: %v, want ErrPermission", wide, err)
		}
	}
	if _, err := tk.Create(ctx, &cs, auth.Request{Perms: auth.Read, ExpiresIn: 2 * time.Hour}); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("a child outliving its parent: %v", err)
	}
	grand := mustCreate(t, tk, &cs, auth.Request{Perms: auth.Read})
	if gs := mustVerify(t, tk, grand.Token); !gs.ExpiresAt.Equal(cs.ExpiresAt) || gs.Pattern != "agent-1" {
		t.Errorf("grandchild without expiry: %+v, want the parent's expiry and pattern", gs)
	}
	prefixed := mustCreate(t, tk, &rs, auth.Request{Workspaces: "agent-1-*", Perms: auth.Read})
	if ps := mustVerify(t, tk, prefixed.Token); ps.Pattern != "agent-1-*" {
		t.Errorf("longer prefix: %+v", ps)
	}
	for _, bad := range []auth.Request{{Perms: 0}, {Workspaces: "a/b", Perms: auth.Read}, {Workspaces: "[", Perms: auth.Read}, {Tenant: "a b", Perms: auth.Read}, {Perms: auth.Read, ExpiresIn: -1}} {
		if _, err := tk.Create(ctx, nil, bad); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("create %+v: %v, want ErrInvalid", bad, err)
		}
	}

	// Listing: a token sees itself and its descendants.
	list, err := tk.List(ctx, &cs)
	if err != nil || len(list) != 2 || list[0].ID != child.ID || list[1].ID != grand.ID {
		t.Errorf("child lists %+v, %v", list, err)
	}
	if err := tk.Revoke(ctx, &cs, root.ID); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("child revokes its parent: %v, want ErrNotExist", err)
	}

	// Revoking the child revokes the grandchild; the root stays.
	if err := tk.Revoke(ctx, &rs, child.ID); err != nil {
		t.Fatal(err)
	}
	wantUnauth(t, tk, "revoked", child.Token)
	if err := wantUnauth(t, tk, "minted from revoked", grand.Token); err != nil && !strings.Contains(err.Error(), "minted from") {
		t.Errorf("grandchild refusal %q does not say why", err)
	}
	mustVerify(t, tk, root.Token)
	if _, err := tk.Create(ctx, &cs, auth.Request{Perms: auth.Read}); !errors.Is(err, errdefs.ErrUnauthenticated) {
		t.Errorf("a revoked token mints: %v", err)
	}
	all, err := tk.List(ctx, nil)
	if err != nil || len(all) != 4 {
		t.Fatalf("list all: %+v, %v", all, err)
	}
	for _, i := range all {
		want := "active"
		if i.ID == child.ID || i.ID == grand.ID {
			want = "revoked"
		}
		if i.State != want {
			t.Errorf("token %s state %s, want %s", i.ID, i.State, want)
		}
	}

	// Expiry: a token past its expiry, and its children, are refused.
	short := mustCreate(t, tk, nil, auth.Request{Perms: auth.Read, ExpiresIn: time.Nanosecond})
	wantUnauth(t, tk, "expired", short.Token)
	if _, _, err := tk.S3Key(ctx, short.ID); !errors.Is(err, errdefs.ErrUnauthenticated) {
		t.Errorf("S3 key of an expired token: %v", err)
	}
	if sec, s, err := tk.S3Key(ctx, root.ID); err != nil || sec != root.S3SecretKey || s.TokenID != root.ID {
		t.Errorf("S3 key of root: %q %+v %v", sec, s, err)
	}
	// Revoking every token keeps authentication on.
	for _, i := range all {
		if err := tk.Revoke(ctx, nil, i.ID); err != nil {
			t.Fatal(err)
		}
	}
	if tk2, err := auth.New(ctx, auth.MetaOf(tk)); err == nil && !tk2.Enabled() {
		t.Errorf("authentication off after revoking every token")
	}
}

// TestAllow: the scope check every door makes.
func TestAllow(t *testing.T) {
	s := auth.Scope{Tenant: "acme", Pattern: "agent-*", Perms: auth.Read | auth.Write}
	cases := []struct {
		op           auth.Perm
		tenant, name string
		want         error
	}{
		{auth.Read, "acme", "agent-1", nil},
		{auth.Write, "acme", "agent-1", nil},
		{auth.Exec, "acme", "agent-1", fs.ErrPermission},
		{auth.Read, "acme", "other", fs.ErrNotExist},
		{auth.Read, "beta", "agent-1", fs.ErrNotExist},
		{auth.Read, "acme", "", nil},
		{auth.Admin, "acme", "", fs.ErrPermission},
	}
	for _, c := range cases {
		err := s.Allow(c.op, c.tenant, c.name)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("Allow(%s, %s, %s) = %v, want %v", c.op, c.tenant, c.name, err, c.want)
		}
	}
	// A forbidden target reads the same whether it exists or not: the
	// error names only what the caller sent.
	if a, b := s.Allow(auth.Read, "acme", "x"), auth.Hidden("x"); a.Error() != b.Error() {
		t.Errorf("hidden %q vs %q", a, b)
	}
	root := auth.Scope{Tenant: auth.AnyTenant, Pattern: "*", Perms: auth.All}
	if err := root.Allow(auth.Admin, "acme", ""); err != nil {
		t.Errorf("store admin: %v", err)
	}
}

// TestTokenExecPolicy: a token's exec policy is kept with it and comes
// back in its scope; a token minted from it keeps the parts it leaves
// unset, may narrow the others, and cannot widen any (fs.ErrPermission,
// nothing created); negative limits are fs.ErrInvalid.
func TestTokenExecPolicy(t *testing.T) {
	tk := newTokens(t)
	allow, err := execpolicy.ParseNetwork("registry.example:443,proxy.example:443")
	if err != nil {
		t.Fatal(err)
	}
	parent := mustCreate(t, tk, nil, auth.Request{Perms: auth.All, Exec: execpolicy.Policy{Network: &allow, Limits: provider.Limits{Memory: 1 << 30}}})
	ps := mustVerify(t, tk, parent.Token)
	if ps.Exec.String() != "network registry.example:443,proxy.example:443, memory ≤ 1073741824" || parent.Exec.String() != ps.Exec.String() {
		t.Fatalf("parent's policy %v (created %v)", ps.Exec, parent.Exec)
	}
	child := mustCreate(t, tk, &ps, auth.Request{Perms: auth.Exec, Exec: execpolicy.Policy{Limits: provider.Limits{Memory: 1 << 20}}})
	if cs := mustVerify(t, tk, child.Token); cs.Exec.String() != "network registry.example:443,proxy.example:443, memory ≤ 1048576" {
		t.Errorf("child's policy %v: want the parent's network and its own memory cap", cs.Exec)
	}
	before, _ := tk.List(context.Background(), nil)
	full := execpolicy.Network{Mode: execpolicy.Full}
	other, _ := execpolicy.ParseNetwork("evil.example:443")
	for name, p := range map[string]execpolicy.Policy{
		"full network":       {Network: &full},
		"another host":       {Network: &other},
		"more memory":        {Limits: provider.Limits{Memory: 2 << 30}},
		"negative processes": {Limits: provider.Limits{Processes: -1}},
	} {
		_, err := tk.Create(context.Background(), &ps, auth.Request{Perms: auth.Exec, Exec: p})
		want := fs.ErrPermission
		if name == "negative processes" {
			want = fs.ErrInvalid
		}
		if !errors.Is(err, want) {
			t.Errorf("%s: create = %v, want %v", name, err, want)
		}
	}
	if after, _ := tk.List(context.Background(), nil); len(after) != len(before) {
		t.Errorf("refused tokens were created: %d tokens, want %d", len(after), len(before))
	}
}

// TestVerifyCache: Verify remembers accepted tokens, but a revocation
// through the same Tokens is seen by the next Verify (of the token and
// of those minted from it), one through another Tokens on the same
// metadata (another process) within CacheTTL, and an expiry on time.
func TestVerifyCache(t *testing.T) {
	ctx := context.Background()
	tk := newTokens(t)
	root := mustCreate(t, tk, nil, auth.Request{Perms: auth.All})
	rs := mustVerify(t, tk, root.Token)
	child := mustCreate(t, tk, &rs, auth.Request{Perms: auth.Read})
	mustVerify(t, tk, child.Token)
	mustVerify(t, tk, root.Token) // remembered now
	if err := tk.Revoke(ctx, nil, root.ID); err != nil {
		t.Fatal(err)
	}
	wantUnauth(t, tk, "revoked, remembered", root.Token)
	wantUnauth(t, tk, "minted from revoked, remembered", child.Token)

	other, err := auth.New(ctx, auth.MetaOf(tk))
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := mustCreate(t, tk, nil, auth.Request{Perms: auth.Read})
	mustVerify(t, tk, elsewhere.Token)
	if err := other.Revoke(ctx, nil, elsewhere.ID); err != nil {
		t.Fatal(err)
	}
	wantUnauth(t, other, "revoked by this Tokens", elsewhere.Token)
	time.Sleep(auth.CacheTTL)
	wantUnauth(t, tk, "revoked by another Tokens, CacheTTL later", elsewhere.Token)

	const life = 300 * time.Millisecond // shorter than CacheTTL
	short := mustCreate(t, tk, nil, auth.Request{Perms: auth.Read, ExpiresIn: life})
	if _, err := tk.Verify(ctx, short.Token); err == nil {
		time.Sleep(life)
		wantUnauth(t, tk, "expired while remembered", short.Token)
	} // else the machine took longer than life to get here: nothing to check
}

// TestVerifyDuringRevoke: a verification that read the token before a
// revocation committed does not remember it after: the next Verify
// refuses the token.
func TestVerifyDuringRevoke(t *testing.T) {
	ctx := context.Background()
	m := &afterView{Store: memmeta.New()}
	tk, err := auth.New(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCreate(t, tk, nil, auth.Request{Perms: auth.Read})
	m.then = func() {
		if err := tk.Revoke(ctx, nil, c.ID); err != nil {
			t.Error(err)
		}
	}
	mustVerify(t, tk, c.Token) // read active, then revoked before it returns
	wantUnauth(t, tk, "revoked while being verified", c.Token)
}

// afterView runs then once, after the next read transaction ends.
type afterView struct {
	meta.Store
	then func()
}

func (a *afterView) View(ctx context.Context, fn func(meta.Tx) error) error {
	err := a.Store.View(ctx, fn)
	if f := a.then; f != nil {
		a.then = nil
		f()
	}
	return err
}
