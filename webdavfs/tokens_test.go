package webdavfs_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/internal/storetest"
	"github.com/forkspace/forkspace/webdavfs"
)

// TestTokens: behind httpapi.Authenticate, each WebDAV request is limited
// to its token: a workspace outside the pattern is 404, and one of another
// tenant is refused exactly as a missing one (COPY and MOVE destinations too), a
// read-only token writes nothing, and the root lists only what the token
// reaches.
func TestTokens(t *testing.T) {
	ctx := context.Background()
	st, ws := storetest.Open(t, 100_000)
	if err := ws.WriteFile(ctx, "f", []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	other, err := st.Create(ctx, "other", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.WriteFile(ctx, "s", []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	tk, err := st.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(r auth.Request) string {
		c, err := tk.Create(ctx, nil, r)
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + c.Token
	}
	rw := mk(auth.Request{Workspaces: "w", Perms: auth.Read | auth.Write})
	ro := mk(auth.Request{Workspaces: "w", Perms: auth.Read})
	acme := mk(auth.Request{Tenant: "acme", Perms: auth.All})
	srv := httptest.NewServer(httpapi.Authenticate(tk, webdavfs.New(st, webdavfs.Options{Logger: quiet})))
	defer srv.Close()
	u := srv.URL

	expired := mk(auth.Request{Perms: auth.All, ExpiresIn: time.Nanosecond})
	revoked, err := tk.Create(ctx, nil, auth.Request{Perms: auth.All})
	if err != nil {
		t.Fatal(err)
	}
	if err := tk.Revoke(ctx, nil, revoked.ID); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", expired, "Bearer " + revoked.Token, "Bearer fks_malformed"} {
		if st, body := do(t, "GET", u+"/w/f", nil, "Authorization", bad); st != 401 || strings.Contains(body, "mine") {
			t.Errorf("token %q: %d %q", bad, st, body)
		}
	}
	if st, body := do(t, "GET", u+"/w/f", nil, "Authorization", ro); st != 200 || body != "mine" {
		t.Errorf("read-only GET: %d %q", st, body)
	}
	if st, _ := do(t, "PUT", u+"/w/g", strings.NewReader("x"), "Authorization", ro); st != 403 {
		t.Errorf("read-only PUT: %d", st)
	}
	for _, c := range []struct{ name, token string }{{"outside the pattern", rw}, {"another tenant", acme}} {
		for _, req := range []struct{ method, path, dest string }{
			{"GET", "/other/s", ""}, {"PROPFIND", "/other/", ""}, {"PUT", "/other/s", ""},
			{"DELETE", "/other/s", ""}, {"MKCOL", "/other/d", ""},
		} {
			st1, b1 := do(t, req.method, u+req.path, strings.NewReader("x"), "Authorization", c.token, "Depth", "1")
			st2, b2 := do(t, req.method, u+strings.Replace(req.path, "other", "zzzzz", 1), strings.NewReader("x"), "Authorization", c.token, "Depth", "1")
			if st1 < 400 || (c.token == rw && st1 != 404) || st1 != st2 || strings.ReplaceAll(b1, "other", "X") != strings.ReplaceAll(b2, "zzzzz", "X") || strings.Contains(b1, "SECRET") {
				t.Errorf("%s: %s %s: %d %q; missing: %d %q", c.name, req.method, req.path, st1, b1, st2, b2)
			}
		}
	}
	for _, m := range []string{"COPY", "MOVE"} {
		if st, body := do(t, m, u+"/w/f", nil, "Authorization", rw, "Destination", u+"/other/f"); st != 404 {
			t.Errorf("%s into a workspace outside the token: %d %s", m, st, body)
		}
	}
	if st, body := do(t, "PROPFIND", u+"/", nil, "Authorization", rw, "Depth", "1"); st != 207 || strings.Contains(body, "other") || !strings.Contains(body, "/w/") {
		t.Errorf("root listing: %d %s", st, body)
	}
	if b, err := other.ReadFile(ctx, "s"); err != nil || string(b) != "SECRET" {
		t.Errorf("other/s after the refusals: %q %v", b, err)
	}
	if _, err := other.Stat(ctx, "f"); err == nil {
		t.Errorf("a refused COPY or MOVE wrote other/f")
	}
}
