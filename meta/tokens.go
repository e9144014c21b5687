package meta

import "time"

// DefaultTenant is the tenant of workspaces created without one, and of
// every workspace a store had before tenants existed (migration 0008).
const DefaultTenant = "default"

// TokenTx is the part of a Tx that keeps tenants and access tokens
// (package auth). A token row holds only a hash of its secret.
type TokenTx interface {
	// CreateTenant records tenant name if it is not recorded yet (an
	// existing one is left as it is). An empty name is fs.ErrInvalid.
	CreateTenant(name string) error
	// Tenants lists the recorded tenants ordered by name.
	Tenants() ([]Tenant, error)

	// CreateToken inserts t (fs.ErrExist if t.ID is taken; fs.ErrInvalid
	// for an empty ID, Tenant or Pattern). CreatedAt is set from the
	// database clock and written back into t.
	CreateToken(t *Token) error
	// Token returns the token with the given ID.
	Token(id string) (*Token, error)
	// Tokens lists every token ordered by creation, then ID.
	Tokens() ([]Token, error)
	// RevokeToken marks the token revoked at the database clock's time
	// (a token already revoked keeps its time). A missing token is
	// fs.ErrNotExist. Tokens minted from it are not changed: their
	// verification walks ParentID.
	RevokeToken(id string) error
	// HasTokens reports whether any token was ever created (revoked ones
	// count: revoking every token does not turn authentication off).
	HasTokens() (bool, error)
}

// Tenant is one namespace of workspaces.
type Tenant struct {
	Name      string
	CreatedAt time.Time
}

// Token is one access token's row: its scope and the hash of its secret.
type Token struct {
	ID     string
	Tenant string
	// Pattern is a path.Match pattern of the workspace names the token
	// reaches; Perms the comma-separated permissions.
	Pattern string
	Perms   string
	// Label is a note for people (may be empty).
	Label string
	// ExpiresAt is zero for a token that does not expire.
	ExpiresAt time.Time
	// ParentID is the token this one was minted from ("" for none).
	ParentID string
	// Hash is the BLAKE3 hash of the secret; S3Secret the derived secret
	// key of the S3 door (a signature check needs the key itself).
	Hash      []byte
	S3Secret  string
	CreatedAt time.Time
	// RevokedAt is zero for a token not revoked.
	RevokedAt time.Time
}
