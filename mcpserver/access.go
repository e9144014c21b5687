package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/tools"
)

// KeepParam on the endpoint URL (?keep=true) keeps the workspace of a
// session that names none; otherwise it is deleted when the session ends.
const KeepParam = "keep"

// scopeExtra is the key of the caller's scope in the SDK's token info.
const scopeExtra = "forkspace.scope"

// connect checks the workspace an HTTP request names (?workspace= or the
// header) before the SDK sees it, so a bad one is refused at connect, not
// at the first tool call: an invalid name is 400; with a token (the
// request was authenticated, see httpapi.Authenticate) a workspace the
// token does not reach is 404, as a missing one. A token whose pattern is
// one name gets that workspace when the request names none; a token
// whose pattern does not cover a session's own workspace must name one.
// It returns r with the header set and the scope passed to the SDK (whose
// sessions then accept only requests with the same token).
func connect(r *http.Request) (*http.Request, int, string) {
	ws := r.URL.Query().Get("workspace")
	if ws == "" {
		ws = r.Header.Get(WorkspaceHeader)
	}
	if ws != "" {
		if err := forkspace.ValidName(ws); err != nil {
			return r, http.StatusBadRequest, fmt.Sprintf("?workspace=%s: %v", quote(ws), err)
		}
	}
	scope, ok := auth.FromContext(r.Context())
	if !ok {
		r.Header.Set(WorkspaceHeader, ws)
		return r, 0, ""
	}
	tenant := forkspace.TenantFrom(r.Context())
	switch {
	case ws != "":
		if err := scope.Allow(auth.Read, tenant, ws); err != nil {
			if !scope.Sees(tenant, ws) {
				return r, http.StatusNotFound, auth.Hidden(ws).Error()
			}
			return r, http.StatusForbidden, err.Error()
		}
	case !strings.ContainsAny(scope.Pattern, `*?[\`):
		ws = scope.Pattern // the token's one workspace
	case !scope.Sees(tenant, "session-x") || scope.Perms&auth.Write == 0:
		return r, http.StatusBadRequest, fmt.Sprintf("name a workspace with ?workspace=NAME: this token reaches %s, not a workspace of the session's own", quote(scope.Pattern))
	}
	r.Header.Set(WorkspaceHeader, ws)
	info := &sdkauth.TokenInfo{UserID: scope.TokenID, Expiration: scope.ExpiresAt, Extra: map[string]any{scopeExtra: scope}}
	return r.WithContext(context.WithValue(r.Context(), tokenInfoKey{}, info)), 0, ""
}

type tokenInfoKey struct{}

// withTokenInfo hands the token info connect put in r's context to the
// SDK (through its bearer middleware, the one way to set it).
func withTokenInfo(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := r.Context().Value(tokenInfoKey{}).(*sdkauth.TokenInfo)
		if !ok {
			h.ServeHTTP(w, r)
			return
		}
		verify := func(context.Context, string, *http.Request) (*sdkauth.TokenInfo, error) { return info, nil }
		sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h).ServeHTTP(w, r)
	})
}

func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// scopeOf returns the scope a tool call's HTTP request carried (nil: no
// authentication).
func scopeOf(req *mcp.CallToolRequest) *auth.Scope {
	if req.Extra == nil || req.Extra.TokenInfo == nil {
		return nil
	}
	s, ok := req.Extra.TokenInfo.Extra[scopeExtra].(auth.Scope)
	if !ok {
		return nil
	}
	return &s
}

// allowCall checks a tool call against scope: the tool's own permission
// on the session's workspace (read for read-only tools, exec for the exec
// tools, write for the others) and read or write on the other workspaces
// its arguments name (fork's new name; merge's and cherry_pick's from).
func allowCall(scope *auth.Scope, tenant, workspace string, tl *tools.Tool, args json.RawMessage) error {
	need := auth.Write
	switch {
	case strings.HasPrefix(tl.Name, "exec"):
		need = auth.Exec
	case tl.ReadOnly:
		need = auth.Read
	}
	if err := scope.Allow(need, tenant, workspace); err != nil {
		return err
	}
	var in struct {
		Name string `json:"name"`
		From string `json:"from"`
	}
	if len(args) > 0 {
		_ = json.Unmarshal(args, &in) // the tool reports malformed arguments
	}
	switch tl.Name {
	case "fork":
		if in.Name != "" {
			return scope.Allow(auth.Write, tenant, in.Name)
		}
	case "merge", "cherry_pick":
		if ws, _, _ := strings.Cut(in.From, "@"); ws != "" {
			return scope.Allow(auth.Read, tenant, ws)
		}
	}
	return nil
}
