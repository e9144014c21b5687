package forkspace

import (
	"context"

	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/meta"
)

// A tenant is a namespace of workspaces: names are unique per tenant, and
// every lookup by name or ID, listing, fork, diff and merge stays inside
// the tenant of its context (docs/decisions/014). A workspace of another
// tenant is fs.ErrNotExist, never fs.ErrPermission, so that its existence
// is not confirmed. Forks stay in their source's tenant. A context without
// a tenant is in meta.DefaultTenant (the library's and the local CLI's).

type tenantKey struct{}

// WithTenant returns ctx for tenant ("" is meta.DefaultTenant).
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantFrom returns the tenant of ctx (meta.DefaultTenant if none).
func TenantFrom(ctx context.Context) string {
	if t, _ := ctx.Value(tenantKey{}).(string); t != "" {
		return t
	}
	return meta.DefaultTenant
}

// Scoped returns ctx for a caller with scope (package auth): the scope,
// and its tenant (a scope of every tenant acts in meta.DefaultTenant).
func Scoped(ctx context.Context, scope auth.Scope) context.Context {
	tenant := scope.Tenant
	if tenant == auth.AnyTenant {
		tenant = ""
	}
	return WithTenant(auth.WithScope(ctx, scope), tenant)
}

// Tenant returns the workspace's tenant.
func (w *Workspace) Tenant() string { return w.tenant }
