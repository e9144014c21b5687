// Package auth is forkspace's access control: scoped bearer tokens and the
// one check every door (REST, MCP, WebDAV, S3, the dashboard) makes before
// it touches a store (docs/decisions/014-tokens-and-tenants.md).
//
// A token is a Scope: a tenant (or AnyTenant), a pattern of workspace
// names (path.Match syntax), permissions (read, write, exec, admin), an
// optional expiry and the token it was minted from. Its secret,
// "fks_<id>_<random>", is shown once; the store keeps only its BLAKE3
// hash and compares in constant time. Revoking a token revokes every
// token minted from it: Verify walks the parents, so a token whose
// ancestor is revoked or expired is refused too. A token mints only
// narrower tokens (Scope.Covers).
//
// Verify remembers the tokens it accepted, so a request costs no
// database read: for at most CacheTTL, never past a token's expiry, and
// Revoke forgets them all, so a revocation is immediate in the process
// that made it and takes at most CacheTTL in another process sharing the
// metadata.
//
// Scope.Allow answers whether a caller may do an operation on a
// workspace. A workspace the scope does not reach is fs.ErrNotExist, as a
// missing one (its existence is not confirmed); a reachable one without
// the permission is fs.ErrPermission. Bad credentials are
// errdefs.ErrUnauthenticated, one message whether the token ID exists or
// not.
//
// For the S3 door, whose SigV4 signatures need the secret key itself, a
// token's access key is its ID and its secret key is derived from the
// token's secret (BLAKE3 key derivation) and stored beside the hash: it
// opens the S3 door only, never the bearer routes.
package auth
