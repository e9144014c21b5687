package auth

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/forkspace/forkspace/execpolicy"
)

// Perm is a set of permissions.
type Perm uint8

// The permissions. Admin on AnyTenant is the store-wide one (gc, fsck,
// df, every tenant's tokens); on a tenant, every token of the tenant.
const (
	Read Perm = 1 << iota
	Write
	Exec
	Admin

	// All is every permission.
	All = Read | Write | Exec | Admin
)

var permNames = []struct {
	p    Perm
	name string
}{{Read, "read"}, {Write, "write"}, {Exec, "exec"}, {Admin, "admin"}}

// ParsePerms reads a comma-separated list of permission names ("all" is
// every one). An empty list or an unknown name is fs.ErrInvalid.
func ParsePerms(s string) (Perm, error) {
	var p Perm
	for name := range strings.SplitSeq(s, ",") {
		name = strings.TrimSpace(name)
		if name == "all" {
			p |= All
			continue
		}
		found := false
		for _, pn := range permNames {
			if pn.name == name {
				p, found = p|pn.p, true
			}
		}
		if !found {
			return 0, fmt.Errorf("permission %q: %w: want read, write, exec, admin or all", name, fs.ErrInvalid)
		}
	}
	return p, nil
}

// String lists the permissions, comma-separated.
func (p Perm) String() string {
	var names []string
	for _, pn := range permNames {
		if p&pn.p != 0 {
			names = append(names, pn.name)
		}
	}
	return strings.Join(names, ",")
}

// MarshalText and UnmarshalText make Perm a JSON string ("read,write").
func (p Perm) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

func (p *Perm) UnmarshalText(b []byte) error {
	v, err := ParsePerms(string(b))
	*p = v
	return err
}

// AnyTenant is the tenant of a scope that reaches every tenant.
const AnyTenant = "*"

// Scope is what a token allows.
type Scope struct {
	// TokenID is the token the scope comes from.
	TokenID string `json:"token_id,omitempty"`
	// Tenant is the tenant the token acts in (AnyTenant: every one).
	Tenant string `json:"tenant"`
	// Pattern matches the workspace names the token reaches (path.Match
	// syntax: "agent-1", "agent-1-*", "*").
	Pattern string `json:"workspaces"`
	Perms   Perm   `json:"perms"`
	// ExpiresAt is zero for a token that does not expire.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// Exec is the token's exec policy (package execpolicy): what the
	// commands it runs may have at most, narrowed with the server's and
	// the workspace's. The zero value narrows nothing.
	Exec execpolicy.Policy `json:"exec,omitzero"`
}

// Sees reports whether the scope reaches workspace name of tenant.
func (s Scope) Sees(tenant, name string) bool {
	if s.Tenant != AnyTenant && s.Tenant != tenant {
		return false
	}
	ok, err := path.Match(s.Pattern, name)
	return ok && err == nil
}

// Allow checks that the scope may do op on workspace name of tenant. A
// workspace it does not reach is fs.ErrNotExist (the same error whether
// or not the workspace exists); one it reaches without op is
// fs.ErrPermission. name "" asks for a store-wide op: Admin needs
// AnyTenant, the others only the permission.
func (s Scope) Allow(op Perm, tenant, name string) error {
	if name == "" {
		if s.Perms&op != op || (op&Admin != 0 && s.Tenant != AnyTenant) {
			return fmt.Errorf("%w: this token may not %s the whole store (it has %s on %s in tenant %s)", fs.ErrPermission, op, s.Perms, s.Pattern, s.Tenant)
		}
		return nil
	}
	if !s.Sees(tenant, name) {
		return Hidden(name)
	}
	if s.Perms&op != op {
		return fmt.Errorf("workspace %s: %w: this token may %s, not %s", name, fs.ErrPermission, s.Perms, op)
	}
	return nil
}

// Hidden is the error for a workspace a scope does not reach, the same as
// for a missing one.
func Hidden(ref string) error {
	return fmt.Errorf("workspace %q: %w", ref, fs.ErrNotExist)
}

// Covers checks that child is no wider than s: its tenant (any, when s is
// AnyTenant), a pattern matching only names s's matches (a literal name s
// matches, s's own pattern, or s's "PREFIX*" with a longer literal
// prefix), a subset of the permissions, an expiry no later than s's and
// an exec policy whose set parts are within s's (execpolicy.Policy.Within;
// Create gives the child s's for the parts it leaves unset).
// A wider child is fs.ErrPermission.
func (s Scope) Covers(child Scope) error {
	switch {
	case s.Tenant != AnyTenant && child.Tenant != s.Tenant:
		return fmt.Errorf("%w: a token of tenant %s cannot mint one for tenant %s", fs.ErrPermission, s.Tenant, child.Tenant)
	case !narrower(s.Pattern, child.Pattern):
		return fmt.Errorf("%w: workspaces %q is not within this token's %q", fs.ErrPermission, child.Pattern, s.Pattern)
	case child.Perms&^s.Perms != 0:
		return fmt.Errorf("%w: permissions %s are not within this token's %s", fs.ErrPermission, child.Perms, s.Perms)
	case !s.ExpiresAt.IsZero() && (child.ExpiresAt.IsZero() || child.ExpiresAt.After(s.ExpiresAt)):
		return fmt.Errorf("%w: the new token must expire by %s, as this one does", fs.ErrPermission, s.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if err := child.Exec.Within(s.Exec); err != nil {
		return fmt.Errorf("exec policy %s is not within this token's %s: %w", child.Exec, s.Exec, err)
	}
	return nil
}

// narrower reports whether pattern child matches only names parent does.
func narrower(parent, child string) bool {
	if parent == "*" || parent == child {
		return true
	}
	if literal(child) {
		ok, err := path.Match(parent, child)
		return ok && err == nil
	}
	pp, okP := strings.CutSuffix(parent, "*")
	cp, okC := strings.CutSuffix(child, "*")
	return okP && okC && literal(pp) && literal(cp) && strings.HasPrefix(cp, pp)
}

// literal reports whether p has no path.Match metacharacters.
func literal(p string) bool { return !strings.ContainsAny(p, `*?[\`) }

// ValidPattern checks a workspace name pattern.
func ValidPattern(p string) error {
	if p == "" || strings.Contains(p, "/") {
		return fmt.Errorf("workspaces %q: %w: want a name or a pattern such as agent-*", p, fs.ErrInvalid)
	}
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Errorf("workspaces %q: %w: %v", p, fs.ErrInvalid, err)
	}
	return nil
}

type scopeKey struct{}

// WithScope returns ctx carrying the caller's scope.
func WithScope(ctx context.Context, s Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// FromContext returns the caller's scope; ok is false when the request
// was not authenticated (authentication off: everything is allowed).
func FromContext(ctx context.Context) (s Scope, ok bool) {
	s, ok = ctx.Value(scopeKey{}).(Scope)
	return s, ok
}

// Allowed checks op on workspace name of tenant for the caller of ctx; a
// context without a scope allows everything.
func Allowed(ctx context.Context, op Perm, tenant, name string) error {
	s, ok := FromContext(ctx)
	if !ok {
		return nil
	}
	return s.Allow(op, tenant, name)
}
