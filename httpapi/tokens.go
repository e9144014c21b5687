package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/errdefs"
)

// access is what a route needs of its caller's token (route.need). The
// zero value is unset: TestRouteAccess fails for a route without one.
type access uint8

const (
	// needRead, needWrite and needExec are the permission on the
	// route's {ws}; on a route without one, the permission at all (a
	// listing is then filtered, a name in the body checked by Local).
	needRead access = iota + 1
	needWrite
	needExec
	// needAdmin is the store-wide admin permission (gc, fsck, df): a
	// token of auth.AnyTenant with admin.
	needAdmin
	// needToken is any valid token (the token routes check the rest).
	needToken
)

func (a access) perm() auth.Perm {
	return map[access]auth.Perm{needRead: auth.Read, needWrite: auth.Write, needExec: auth.Exec, needAdmin: auth.Admin}[a]
}

// Namer is implemented by an API that can name the workspace an ID refers
// to in the caller's tenant (Local). A Server with authentication needs
// it to check a token's name pattern against a {ws} given as an ID.
type Namer interface {
	WorkspaceName(ctx context.Context, ref string) (string, error)
}

// queryTokenParams are query parameters that carry a token in other APIs.
var queryTokenParams = []string{"access_token", "token", "bearer", "api_key", "apikey", "auth", "authorization"}

// Authenticate wraps what a server serves behind tokens (the REST API,
// MCP, the dashboard's calls). Tokens come only from the Authorization
// header ("Bearer fks_…"): a request with a token in its query string is
// refused (400, before anything else) so that none lands in logs or
// browser history. When tokens is nil or not Enabled (a store without
// tokens, served on loopback), other requests pass unauthenticated with
// every permission. Otherwise a request needs a valid token (401 with
// WWW-Authenticate otherwise, one answer for a malformed, unknown,
// expired or revoked token); its scope goes into the request's context
// (auth.FromContext) with its tenant (forkspace.WithTenant; a token of
// every tenant acts in the default one), where every route checks it
// (Server: by the route table; mcpserver at connect).
func Authenticate(tokens *auth.Tokens, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg := queryToken(r); msg != "" {
			writeError(w, r, http.StatusBadRequest, apiError{Code: CodeBadRequestBody, Message: msg})
			return
		}
		if tokens == nil || !tokens.Enabled() {
			h.ServeHTTP(w, r)
			return
		}
		scope, err := bearer(r, tokens)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="forkspace"`)
			fail(w, r, err)
			return
		}
		h.ServeHTTP(w, r.WithContext(forkspace.Scoped(r.Context(), scope)))
	})
}

// queryToken says why r's query string is refused ("" if it is not).
func queryToken(r *http.Request) string {
	q := r.URL.Query()
	for _, p := range queryTokenParams {
		if q.Has(p) {
			return "query parameter " + p + ": tokens are accepted only in the Authorization header (Authorization: Bearer TOKEN), never in a URL"
		}
	}
	for k, vs := range q {
		for _, v := range vs {
			if looksLikeToken(v) || looksLikeToken(k) {
				return "a token in the query string: tokens are accepted only in the Authorization header (Authorization: Bearer TOKEN), never in a URL"
			}
		}
	}
	return ""
}

// looksLikeToken reports whether s holds something shaped like a token
// secret (fks_tk…_…), so that a workspace merely named fks_x passes.
func looksLikeToken(s string) bool {
	i := strings.Index(s, auth.Prefix+"tk")
	if i < 0 {
		return false
	}
	rest := s[i+len(auth.Prefix):]
	return len(rest) > 19 && rest[18] == '_'
}

// bearer verifies the request's Authorization header.
func bearer(r *http.Request, tokens *auth.Tokens) (auth.Scope, error) {
	hs := r.Header.Values("Authorization")
	if len(hs) == 0 {
		return auth.Scope{}, fmt.Errorf("%w: this server needs a token: send Authorization: Bearer TOKEN (see 'forkspace token create')", errdefs.ErrUnauthenticated)
	}
	scheme, secret, ok := strings.Cut(hs[0], " ")
	if len(hs) != 1 || !ok || !strings.EqualFold(scheme, "Bearer") {
		return auth.Scope{}, fmt.Errorf("%w: want one header Authorization: Bearer TOKEN", errdefs.ErrUnauthenticated)
	}
	return tokens.Verify(r.Context(), strings.TrimSpace(secret))
}

// authorize checks the route's need against the caller's scope, if the
// request has one: on {ws} when the route has it (a workspace the token
// does not reach, or one that does not exist behind an ID, is the same
// 404), else store-wide.
func (s *Server) authorize(r *http.Request, need access) error {
	ctx := r.Context()
	scope, ok := auth.FromContext(ctx)
	if !ok || need == needToken {
		return nil
	}
	ref := r.PathValue("ws")
	if ref == "" {
		return scope.Allow(need.perm(), forkspace.TenantFrom(ctx), "")
	}
	return permit(ctx, s.opts.API, need.perm(), ref)
}

// permit checks perm on the workspace of state ref for the caller of ctx
// (nothing to check without a scope). names resolves IDs.
func permit(ctx context.Context, names API, perm auth.Perm, ref string) error {
	scope, ok := auth.FromContext(ctx)
	if !ok {
		return nil
	}
	ws, _, err := forkspace.ParseState(ref)
	if err != nil {
		return err
	}
	name := ws
	if strings.HasPrefix(ws, "ws-") {
		n, ok := names.(Namer)
		if !ok {
			return auth.Hidden(ref)
		}
		if name, err = n.WorkspaceName(ctx, ws); err != nil {
			return auth.Hidden(ref)
		}
	}
	if err := scope.Allow(perm, forkspace.TenantFrom(ctx), name); err != nil {
		if scope.Sees(forkspace.TenantFrom(ctx), name) {
			return err
		}
		return auth.Hidden(ref)
	}
	return nil
}

// tokenRoutes are the table entries of the token calls.
func tokenRoutes() []route {
	return []route{
		{method: "POST", pattern: "/v1/tokens", op: "createToken", need: needToken,
			summary: "Mint a token no wider than the caller's (its secret is in this reply only)",
			in:      typeOf[auth.Request](), out: typeOf[auth.Created](), ok: 201, errs: []int{401, 403}, handle: (*Server).createToken},
		{method: "GET", pattern: "/v1/tokens", op: "listTokens", need: needToken,
			summary: "The tokens the caller manages: itself and those minted from it (an admin: its tenant's)",
			out:     typeOf[[]auth.Info](), ok: 200, errs: []int{401}, handle: (*Server).listTokens},
		{method: "DELETE", pattern: "/v1/tokens/{id}", op: "revokeToken", need: needToken,
			summary: "Revoke a token and every token minted from it",
			ok:      204, errs: []int{401, 404}, handle: (*Server).revokeToken},
	}
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request) error {
	var req auth.Request
	if err := decode(r, &req, false); err != nil {
		return err
	}
	c, err := s.opts.API.CreateToken(r.Context(), req)
	if err != nil {
		return err
	}
	return reply(w, http.StatusCreated, c)
}

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) error {
	ts, err := s.opts.API.Tokens(r.Context())
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, ts)
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	if err := s.opts.API.RevokeToken(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// caller returns the scope of ctx's caller (nil: the store's owner).
func caller(ctx context.Context) *auth.Scope {
	if s, ok := auth.FromContext(ctx); ok {
		return &s
	}
	return nil
}

func (l *Local) CreateToken(ctx context.Context, r auth.Request) (auth.Created, error) {
	t, err := l.st.Tokens(ctx)
	if err != nil {
		return auth.Created{}, err
	}
	return t.Create(ctx, caller(ctx), r)
}

func (l *Local) Tokens(ctx context.Context) ([]auth.Info, error) {
	t, err := l.st.Tokens(ctx)
	if err != nil {
		return nil, err
	}
	return t.List(ctx, caller(ctx))
}

func (l *Local) RevokeToken(ctx context.Context, id string) error {
	t, err := l.st.Tokens(ctx)
	if err != nil {
		return err
	}
	return t.Revoke(ctx, caller(ctx), id)
}

// WorkspaceName implements Namer.
func (l *Local) WorkspaceName(ctx context.Context, ref string) (string, error) {
	w, err := l.st.Workspace(ctx, ref)
	if err != nil {
		return "", err
	}
	return w.Name(), nil
}

func (c *Client) CreateToken(ctx context.Context, r auth.Request) (created auth.Created, err error) {
	return created, c.call(ctx, "POST", c.u(nil, "tokens"), r, &created)
}

func (c *Client) Tokens(ctx context.Context) (ts []auth.Info, err error) {
	return ts, c.call(ctx, "GET", c.u(nil, "tokens"), nil, &ts)
}

func (c *Client) RevokeToken(ctx context.Context, id string) error {
	return c.call(ctx, "DELETE", c.u(nil, "tokens", url.PathEscape(id)), nil, nil)
}
