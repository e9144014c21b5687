package httpapi_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/vfs"
)

// marker is the content of the target's file: no refused request may
// return it.
const marker = "SECRET-CONTENT-OF-THE-TARGET"

// isolation is a served store with tokens: a target workspace "w" of the
// default tenant holding marker, an "other" beside it, a tenant "acme"
// with a workspace of the same name, and a token of each kind.
type isolation struct {
	*env
	target  forkspace.Info // default's w
	missing string         // an ID of the target's shape that names nothing
	tokens  map[string]string
	root    auth.Created
}

func newIsolation(t *testing.T) *isolation {
	t.Helper()
	ctx := context.Background()
	e := newEnvOpts(t, httpapi.Options{})
	tk, err := e.st.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e = withTokens(t, e, tk)
	w, err := e.st.Create(ctx, "w", forkspace.CreateOptions{})
	must(t, err)
	must(t, w.WriteFile(ctx, "f", []byte(marker), 0o644))
	_, err = w.Checkpoint(ctx, "c")
	must(t, err)
	_, err = e.st.Create(ctx, "other", forkspace.CreateOptions{})
	must(t, err)
	acme := forkspace.WithTenant(ctx, "acme")
	aw, err := e.st.Create(acme, "w", forkspace.CreateOptions{})
	must(t, err)
	must(t, aw.WriteFile(acme, "f", []byte("acme's own"), 0o644))
	info, err := w.Info(ctx)
	must(t, err)
	is := &isolation{env: e, target: info, missing: "ws-" + strings.Repeat("0", len(info.ID)-3), tokens: map[string]string{}}
	mk := func(by *auth.Scope, r auth.Request) auth.Created {
		c, err := tk.Create(ctx, by, r)
		must(t, err)
		return c
	}
	is.root = mk(nil, auth.Request{Tenant: auth.AnyTenant, Perms: auth.All, Label: "root"})
	is.tokens["other-tenant"] = mk(nil, auth.Request{Tenant: "acme", Perms: auth.All}).Token
	is.tokens["other-workspace"] = mk(nil, auth.Request{Workspaces: "other", Perms: auth.All}).Token
	is.tokens["expired"] = mk(nil, auth.Request{Perms: auth.All, ExpiresIn: time.Nanosecond}).Token
	revoked := mk(nil, auth.Request{Perms: auth.All})
	is.tokens["revoked"] = revoked.Token
	parent := mk(nil, auth.Request{Perms: auth.All})
	ps, err := tk.Verify(ctx, parent.Token)
	must(t, err)
	is.tokens["minted-from-revoked"] = mk(&ps, auth.Request{Workspaces: "w", Perms: auth.All}).Token
	must(t, tk.Revoke(ctx, nil, revoked.ID))
	must(t, tk.Revoke(ctx, nil, parent.ID))
	is.tokens["malformed"] = "fks_not-a-token"
	is.tokens["absent"] = ""
	is.tokens["read-only"] = mk(nil, auth.Request{Workspaces: "w", Perms: auth.Read}).Token
	is.tokens["no-exec"] = mk(nil, auth.Request{Workspaces: "w", Perms: auth.Read | auth.Write}).Token
	return is
}

// withTokens serves e's store again, behind its tokens.
func withTokens(t *testing.T, e *env, tk *auth.Tokens) *env {
	t.Helper()
	srv := newServed(t, e.local, httpapi.Options{Tokens: tk})
	e.url = srv
	return e
}

// call sends method path with token (none when ""), returning the status
// and body.
func (is *isolation) call(t *testing.T, method, path, body, token string) (int, []byte) {
	t.Helper()
	var hdr []string
	if token != "" {
		hdr = []string{"Authorization", "Bearer " + token}
	}
	st, _, b := is.do(t, method, path, strings.NewReader(body), hdr...)
	return st, b
}

// request returns the path and body of a route aimed at workspace ref
// (and at ref as every other state it names).
func request(method, pattern, ref, tokenID string) (string, string) {
	p := strings.NewReplacer("{ws}", url.PathEscape(ref), "{path...}", "f", "{action}", "flush", "{id}", tokenID).Replace(pattern)
	body := bodies[method+" "+pattern]
	switch method + " " + pattern {
	case "GET /v1/diff":
		p += "?" + url.Values{"from": {ref}, "to": {ref + "@c"}}.Encode()
	case "GET /v1/audit":
		p += "?" + url.Values{"workspace": {ref}}.Encode()
	case "GET /v1/compare":
		p += "?" + url.Values{"state": {ref, ref + "@c"}}.Encode()
	case "POST /v1/workspaces/{ws}/merge", "POST /v1/workspaces/{ws}/cherry-pick":
		body = strings.Replace(body, `"other"`, `"`+ref+`"`, 1)
	case "POST /v1/tokens":
		body = `{"perms":"read"}`
	case "POST /v1/workspaces/{ws}/import":
		body = ""
	}
	return p, body
}

// TestIsolationMatrix tries every route of the table with tokens of
// another tenant, another workspace, expired, revoked, minted from a
// revoked one, malformed, absent and narrowed: each is refused as it
// should be, the refusal reads the same whether the target exists or
// not, nothing of the target is returned, and nothing changes.
func TestIsolationMatrix(t *testing.T) {
	ctx := context.Background()
	is := newIsolation(t)
	before, err := is.st.List(ctx)
	must(t, err)
	unauthenticated := []string{"expired", "revoked", "minted-from-revoked", "malformed", "absent"}
	for _, rt := range httpapi.Routes() {
		method, pattern, _ := strings.Cut(rt, " ")
		obsMethod := method
		if method == "HEAD" {
			obsMethod = "GET"
		}
		hasWS := strings.Contains(pattern, "{ws}")
		aimed := hasWS || pattern == "/v1/diff" || pattern == "/v1/audit" || pattern == "/v1/compare" // routes that name the target
		// A token in the query string is refused before anything else.
		p, body := request(method, pattern, is.target.Name, is.root.ID)
		sep := "?"
		if strings.Contains(p, "?") {
			sep = "&"
		}
		st, _ := is.call(t, method, p+sep+"access_token="+url.QueryEscape(is.root.Token), body, "")
		if st != 400 {
			t.Errorf("%s with a token in the query: %d, want 400", rt, st)
		}
		observe(obsMethod, pattern, st)
		for _, kind := range unauthenticated {
			st, b := is.call(t, method, p, body, is.tokens[kind])
			if st != 401 || (method != "HEAD" && apiErr(t, b).Code != "unauthenticated") {
				t.Errorf("%s with an %s token: %d %s, want 401", rt, kind, st, b)
			}
			observe(obsMethod, pattern, st)
		}
		// Hidden targets: another tenant's (by ID), a workspace outside the
		// pattern (by name and ID): 404, as for a target that does not
		// exist.
		type aim struct{ token, ref, missing string }
		aims := []aim{{"other-tenant", is.target.ID, is.missing}, {"other-workspace", is.target.ID, is.missing}, {"other-workspace", "w", "zz"}}
		for _, a := range aims {
			p, body := request(method, pattern, a.ref, is.root.ID)
			st, b := is.call(t, method, p, body, is.tokens[a.token])
			pm, bodym := request(method, pattern, a.missing, is.root.ID)
			stm, bm := is.call(t, method, pm, bodym, is.tokens[a.token])
			if bytes.Contains(b, []byte(marker)) {
				t.Errorf("%s: the %s token read the target: %s", rt, a.token, b)
			}
			if bytes.Contains(b, []byte(is.target.ID)) && a.ref != is.target.ID {
				t.Errorf("%s: the %s token learnt the target's ID: %s", rt, a.token, b)
			}
			if aimed && st != stm || aimed && !bytes.Equal(unref(b, a.ref), unref(bm, a.missing)) {
				t.Errorf("%s with the %s token: target %d %s, missing %d %s: not the same", rt, a.token, st, b, stm, bm)
			}
			if hasWS && st != 404 {
				t.Errorf("%s with the %s token on %s: %d %s, want 404", rt, a.token, a.ref, st, b)
			}
		}
		// Narrowed tokens: what they lack is 403, reads pass the check.
		p, body = request(method, pattern, "w", is.root.ID)
		for kind, lacks := range map[string][]string{
			"read-only": {"write", "exec", "admin"},
			"no-exec":   {"exec", "admin"},
		} {
			need := needOf(method, pattern)
			if !contains(lacks, need) && need != "read" {
				continue // allowed, and it would change the target
			}
			st, b := is.call(t, method, p, body, is.tokens[kind])
			refused := st == 403 && (method == "HEAD" || apiErr(t, b).Code == "permission")
			if contains(lacks, need) != refused {
				t.Errorf("%s (needs %s) with the %s token: %d %s", rt, need, kind, st, b)
			}
			observe(obsMethod, pattern, st)
		}
	}
	// Nothing changed: the target's state, the default tenant's workspaces.
	changes, err := is.st.Diff(ctx, "w@c", "w", vfs.DiffOptions{})
	if err != nil || len(changes) != 0 {
		t.Errorf("the target changed: %v, %v", changes, err)
	}
	after, err := is.st.List(ctx)
	must(t, err)
	if len(after) != len(before) {
		t.Errorf("default's workspaces: %d before, %d after", len(before), len(after))
	}
}

// needOf is the permission a route needs, as docs/rest.md lists it.
func needOf(method, pattern string) string {
	switch {
	case pattern == "/v1/openapi.json" || strings.HasPrefix(pattern, "/v1/tokens"):
		return "token"
	case pattern == "/v1/gc" || pattern == "/v1/fsck" || pattern == "/v1/df":
		return "admin"
	case strings.HasSuffix(pattern, "/exec"):
		return "exec"
	case method == "GET" || method == "HEAD" || strings.HasSuffix(pattern, "/glob") || strings.HasSuffix(pattern, "/grep") || strings.HasSuffix(pattern, "/fork") || strings.HasSuffix(pattern, "/fork-n"):
		return "read"
	}
	return "write"
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestScopedListings: listings and the audit log show only what a token
// reaches, and a token mints only narrower tokens through the API.
func TestScopedListings(t *testing.T) {
	ctx := context.Background()
	is := newIsolation(t)
	c := func(token string) *httpapi.Client {
		cl, err := httpapi.NewClient(is.url, httpapi.ClientOptions{Token: token})
		must(t, err)
		return cl
	}
	other := c(is.tokens["other-workspace"])
	p, err := other.ListWorkspaces(ctx, httpapi.PageRequest{})
	if err != nil || len(p.Workspaces) != 1 || p.Workspaces[0].Name != "other" {
		t.Errorf("other-workspace lists %+v, %v", p, err)
	}
	acme := c(is.tokens["other-tenant"])
	p, err = acme.ListWorkspaces(ctx, httpapi.PageRequest{})
	if err != nil || len(p.Workspaces) != 1 || p.Workspaces[0].Name != "w" || p.Workspaces[0].ID == is.target.ID {
		t.Errorf("acme lists %+v, %v", p, err)
	}
	d, err := acme.Open(ctx, "w", "f", httpapi.ReadRequest{Length: -1})
	must(t, err)
	var buf bytes.Buffer
	buf.ReadFrom(d)
	d.Close()
	if buf.String() != "acme's own" {
		t.Errorf("acme's w reads %q", buf.String())
	}
	root := c(is.root.Token)
	if _, err := root.Checkpoint(ctx, "w", "by-root"); err != nil {
		t.Fatal(err)
	}
	mine, err := root.Audit(ctx, "w", audit.Filter{Limit: 1})
	if err != nil || len(mine) != 1 || !strings.HasSuffix(mine[0].Actor, " token:"+is.root.ID) {
		t.Errorf("the audit entry of a call with a token: %+v, %v", mine, err)
	}
	es, err := other.Audit(ctx, "", auditAll)
	must(t, err)
	for _, e := range es {
		if e.WorkspaceID == is.target.ID {
			t.Errorf("other-workspace sees the target's audit entry %+v", e)
		}
	}
	// Minting through the API: narrower only, and the child works.
	ro := c(is.tokens["read-only"])
	if _, err := ro.CreateToken(ctx, auth.Request{Perms: auth.Write}); err == nil {
		t.Errorf("a read-only token minted a writer")
	}
	child, err := ro.CreateToken(ctx, auth.Request{Perms: auth.Read, ExpiresIn: time.Hour})
	must(t, err)
	if child.Workspaces != "w" || child.Tenant != "default" {
		t.Errorf("child %+v", child)
	}
	if _, err := c(child.Token).Stat(ctx, "w", "f"); err != nil {
		t.Errorf("the child reads: %v", err)
	}
	ts, err := ro.Tokens(ctx)
	if err != nil || len(ts) != 2 {
		t.Errorf("read-only lists %+v, %v", ts, err)
	}
	must(t, ro.RevokeToken(ctx, child.ID))
	if _, err := c(child.Token).Stat(ctx, "w", "f"); err == nil {
		t.Errorf("a revoked child still reads")
	}
}

// newServed serves api with o (and the test's observer) on 127.0.0.1 until
// the test ends, returning its URL.
func newServed(t testing.TB, api httpapi.API, o httpapi.Options) string {
	t.Helper()
	o.API, o.Observe = api, observe
	if o.Logger == nil {
		o.Logger = quiet
	}
	srv := httptest.NewUnstartedServer(httpapi.Guard(httpapi.NewServer(o).Handler()))
	srv.Config = httpapi.HTTPServer(srv.Config.Handler)
	srv.Start()
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL
}

// unref replaces the quoted ref in a JSON error body by REF.
func unref(body []byte, ref string) []byte {
	return bytes.ReplaceAll(body, []byte(`\"`+ref+`\"`), []byte(`\"REF\"`))
}
