package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeebo/blake3"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/execpolicy"
	"github.com/forkspace/forkspace/meta"
)

// Prefix starts every token secret.
const Prefix = "fks_"

// maxChain bounds the walk from a token to its first ancestor.
const maxChain = 64

var encoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// CacheTTL bounds how long Verify answers for a token from memory
// without reading the store: the delay before a revocation made by
// another process sharing the metadata (PostgreSQL) takes effect here.
// A revocation through this Tokens takes effect at once.
const CacheTTL = time.Second

// maxCached bounds the verified tokens kept in memory.
const maxCached = 4096

// Tokens keeps the tokens of one store. It is safe for concurrent use.
type Tokens struct {
	meta    meta.Store
	enabled atomic.Bool

	// mu guards the verified tokens, by the hash of their secret, and
	// gen, which Revoke bumps so that a verification read before a
	// revocation committed is not cached after it.
	mu       sync.Mutex
	verified map[[32]byte]verified
	gen      uint64
}

// verified is a token Verify accepted, valid in memory until until (the
// earlier of CacheTTL after the check and the token's expiry).
type verified struct {
	scope Scope
	until time.Time
}

// New returns the tokens of m.
func New(ctx context.Context, m meta.Store) (*Tokens, error) {
	t := &Tokens{meta: m, verified: map[[32]byte]verified{}}
	err := m.View(ctx, func(tx meta.Tx) error {
		has, err := tx.HasTokens()
		t.enabled.Store(has)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read tokens: %w", err)
	}
	return t, nil
}

// Enabled reports whether authentication is on: the store holds a token
// (revoked ones count, so revoking every token keeps it on) or Require
// was called.
func (t *Tokens) Enabled() bool { return t.enabled.Load() }

// Require turns authentication on even before any token exists.
func (t *Tokens) Require() { t.enabled.Store(true) }

// Request describes a token to create.
type Request struct {
	// Tenant is the tenant ("" is meta.DefaultTenant; AnyTenant every
	// tenant).
	Tenant string `json:"tenant,omitempty"`
	// Workspaces is the name pattern ("" is "*").
	Workspaces string `json:"workspaces,omitempty"`
	// Perms ("" is not allowed: name them).
	Perms Perm `json:"perms"`
	// ExpiresIn, when positive, is the token's lifetime (nanoseconds in
	// JSON); 0 is none, or the parent's expiry.
	ExpiresIn time.Duration `json:"expires_in_ns,omitempty"`
	Label     string        `json:"label,omitempty"`
	// Exec is the token's exec policy: parts left unset are the caller's
	// token's (none for the store's owner); set parts must be within it.
	Exec execpolicy.Policy `json:"exec,omitzero"`
}

// Info describes a token (never its secret). State is "active",
// "expired" or "revoked" (an ancestor's counts).
type Info struct {
	ID         string    `json:"id"`
	Tenant     string    `json:"tenant"`
	Workspaces string    `json:"workspaces"`
	Perms      Perm      `json:"perms"`
	Label      string    `json:"label,omitempty"`
	Parent     string    `json:"parent,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  time.Time `json:"expires_at,omitzero"`
	RevokedAt  time.Time `json:"revoked_at,omitzero"`
	State      string    `json:"state"`
	// Exec is the token's exec policy (zero: none).
	Exec execpolicy.Policy `json:"exec,omitzero"`
}

// Created is a new token with its secrets, shown this once.
type Created struct {
	Info
	// Token is the bearer secret (Authorization: Bearer TOKEN).
	Token string `json:"token"`
	// S3AccessKey and S3SecretKey sign requests to the S3 door.
	S3AccessKey string `json:"s3_access_key"`
	S3SecretKey string `json:"s3_secret_key"`
}

// Create makes a token. by is the scope of the caller (nil: the store's
// owner, who may create any): the new token is minted from it and must be
// no wider (fs.ErrPermission otherwise).
func (t *Tokens) Create(ctx context.Context, by *Scope, r Request) (Created, error) {
	tenant := r.Tenant
	if tenant == "" {
		tenant = meta.DefaultTenant
		if by != nil && by.Tenant != AnyTenant {
			tenant = by.Tenant
		}
	}
	if err := validTenant(tenant); err != nil {
		return Created{}, err
	}
	pattern := r.Workspaces
	if pattern == "" {
		pattern = "*"
		if by != nil {
			pattern = by.Pattern
		}
	}
	if err := ValidPattern(pattern); err != nil {
		return Created{}, err
	}
	if r.Perms == 0 || r.Perms&^All != 0 {
		return Created{}, fmt.Errorf("token: %w: name its permissions (read, write, exec, admin)", fs.ErrInvalid)
	}
	if r.ExpiresIn < 0 {
		return Created{}, fmt.Errorf("token: %w: negative lifetime", fs.ErrInvalid)
	}
	if len(r.Label) > 200 {
		return Created{}, fmt.Errorf("token: %w: label longer than 200 bytes", fs.ErrInvalid)
	}
	if err := r.Exec.Check(); err != nil {
		return Created{}, fmt.Errorf("token: %w", err)
	}
	var c Created
	err := t.meta.Update(ctx, func(tx meta.Tx) error {
		now, err := tx.Now()
		if err != nil {
			return err
		}
		scope := Scope{Tenant: tenant, Pattern: pattern, Perms: r.Perms, Exec: r.Exec}
		if r.ExpiresIn > 0 {
			scope.ExpiresAt = now.Add(r.ExpiresIn)
		}
		var parent string
		if by != nil {
			// The caller's token is checked again in this transaction: a
			// token revoked meanwhile mints nothing.
			if _, err := verifyChain(tx, by.TokenID, now); err != nil {
				return err
			}
			if scope.ExpiresAt.IsZero() {
				scope.ExpiresAt = by.ExpiresAt
			}
			if err := by.Covers(scope); err != nil {
				return err
			}
			scope.Exec = by.Exec.Narrow(scope.Exec)
			parent = by.TokenID
		}
		id, secret := newSecret()
		s3 := s3Secret(secret)
		sum := hash(secret)
		row := meta.Token{ID: id, Tenant: tenant, Pattern: pattern, Perms: r.Perms.String(), Label: r.Label,
			ExpiresAt: scope.ExpiresAt, ParentID: parent, Hash: sum[:], S3Secret: s3}
		if tenant != AnyTenant {
			if err := tx.CreateTenant(tenant); err != nil {
				return err
			}
		}
		if err := tx.CreateToken(&row); err != nil {
			return err
		}
		if err := putExecPolicy(tx, id, scope.Exec); err != nil {
			return err
		}
		c = Created{Info: info(row, "active", scope.Exec), Token: secret, S3AccessKey: id, S3SecretKey: s3}
		return nil
	})
	if err != nil {
		return Created{}, fmt.Errorf("create token: %w", err)
	}
	t.enabled.Store(true)
	return c, nil
}

// validTenant checks a tenant name: a workspace-like name or AnyTenant.
func validTenant(s string) error {
	if s == AnyTenant {
		return nil
	}
	if len(s) == 0 || len(s) > 64 || strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) >= 0 {
		return fmt.Errorf("tenant %q: %w: use 1-64 letters, digits, '.', '_' or '-' (or * for every tenant)", s, fs.ErrInvalid)
	}
	return nil
}

// newSecret returns a new token ID and its secret.
func newSecret() (id, secret string) {
	var b [42]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	id = "tk" + encoding.EncodeToString(b[:10])
	return id, Prefix + id + "_" + encoding.EncodeToString(b[10:])
}

func hash(secret string) [32]byte { return blake3.Sum256([]byte(secret)) }

// s3Secret derives the S3 secret key of a token.
func s3Secret(secret string) string {
	var out [20]byte
	blake3.DeriveKey("forkspace 2026-11 S3 secret key of a token", []byte(secret), out[:])
	return hex.EncodeToString(out[:])
}

// parse splits a secret into its token ID.
func parse(secret string) (string, bool) {
	rest, ok := strings.CutPrefix(secret, Prefix)
	if !ok {
		return "", false
	}
	id, sec, ok := strings.Cut(rest, "_")
	if !ok || !strings.HasPrefix(id, "tk") || len(id) != 18 || len(sec) != 52 {
		return "", false
	}
	return id, true
}

// errInvalid is the refusal of a secret that is malformed or whose ID or
// hash does not match: one message, so it does not tell whether the ID
// exists.
var errInvalid = fmt.Errorf("%w: invalid token", errdefs.ErrUnauthenticated)

// Verify returns the scope of a bearer secret. A malformed, unknown,
// expired or revoked token (or one minted from an expired or revoked
// one) is errdefs.ErrUnauthenticated.
//
// A token accepted is remembered (by the hash of its secret) for at most
// CacheTTL and never past its expiry, which is no later than its
// ancestors'; Revoke forgets every remembered token, so a revocation
// through t is seen by every Verify that starts after Revoke returns.
func (t *Tokens) Verify(ctx context.Context, secret string) (Scope, error) {
	id, ok := parse(secret)
	if !ok {
		return Scope{}, fmt.Errorf("%w: malformed token (want %s…)", errdefs.ErrUnauthenticated, Prefix)
	}
	sum := hash(secret)
	t.mu.Lock()
	v, ok := t.verified[sum]
	gen := t.gen
	t.mu.Unlock()
	if ok && time.Now().Before(v.until) {
		return v.scope, nil
	}
	var (
		s     Scope
		until time.Time
	)
	err := t.meta.View(ctx, func(tx meta.Tx) error {
		k, err := tx.Token(id)
		if errors.Is(err, fs.ErrNotExist) {
			return errInvalid
		}
		if err != nil {
			return err
		}
		if subtle.ConstantTimeCompare(k.Hash, sum[:]) != 1 {
			return errInvalid
		}
		now, err := tx.Now()
		if err != nil {
			return err
		}
		s, err = verifyChain(tx, id, now)
		// A token expires no later than its parent (Scope.Covers), so
		// its own expiry bounds the chain's; it is read on the
		// database's clock and kept on this one's.
		until = time.Now().Add(CacheTTL)
		if left := s.ExpiresAt.Sub(now); !s.ExpiresAt.IsZero() && left < CacheTTL {
			until = time.Now().Add(left)
		}
		return err
	})
	if err == nil {
		t.remember(sum, gen, verified{scope: s, until: until})
	}
	return s, err
}

// remember keeps v for the secret hashed to sum, unless a revocation
// ended since the verification began (t.gen moved past gen). Past
// maxCached entries the lapsed ones go, and all of them if none has.
func (t *Tokens) remember(sum [32]byte, gen uint64, v verified) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gen != gen {
		return
	}
	if len(t.verified) >= maxCached {
		now := time.Now()
		for k, old := range t.verified {
			if !now.Before(old.until) {
				delete(t.verified, k)
			}
		}
		if len(t.verified) >= maxCached {
			clear(t.verified)
		}
	}
	t.verified[sum] = v
}

// forget drops every remembered verification, and any under way.
func (t *Tokens) forget() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.gen++
	clear(t.verified)
}

// S3Key returns the secret key and scope of an S3 access key (a token
// ID); an unknown, expired or revoked one is errdefs.ErrUnauthenticated.
func (t *Tokens) S3Key(ctx context.Context, accessKey string) (string, Scope, error) {
	var (
		secret string
		s      Scope
	)
	err := t.meta.View(ctx, func(tx meta.Tx) error {
		k, err := tx.Token(accessKey)
		if errors.Is(err, fs.ErrNotExist) || (err == nil && k.S3Secret == "") {
			return errInvalid
		}
		if err != nil {
			return err
		}
		now, err := tx.Now()
		if err != nil {
			return err
		}
		secret = k.S3Secret
		s, err = verifyChain(tx, accessKey, now)
		return err
	})
	return secret, s, err
}

// verifyChain returns the scope of token id if it and every token it was
// minted from are neither revoked nor expired at now.
func verifyChain(tx meta.Tx, id string, now time.Time) (Scope, error) {
	var s Scope
	for i, cur := 0, id; cur != ""; i++ {
		if i == maxChain {
			return Scope{}, fmt.Errorf("%w: token %s: %w: more than %d ancestors", errdefs.ErrUnauthenticated, id, errdefs.ErrCorrupt, maxChain)
		}
		k, err := tx.Token(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return Scope{}, errInvalid
		}
		if err != nil {
			return Scope{}, err
		}
		if st := state(k, now); st != "active" {
			if cur == id {
				return Scope{}, fmt.Errorf("%w: token %s is %s", errdefs.ErrUnauthenticated, id, st)
			}
			return Scope{}, fmt.Errorf("%w: token %s was minted from %s, which is %s", errdefs.ErrUnauthenticated, id, cur, st)
		}
		if cur == id {
			perms, err := ParsePerms(k.Perms)
			if err != nil {
				return Scope{}, fmt.Errorf("token %s: %w: %w", id, errdefs.ErrCorrupt, err)
			}
			pol, err := execPolicy(tx, id)
			if err != nil {
				return Scope{}, err
			}
			s = Scope{TokenID: id, Tenant: k.Tenant, Pattern: k.Pattern, Perms: perms, ExpiresAt: k.ExpiresAt, Exec: pol}
		}
		cur = k.ParentID
	}
	return s, nil
}

// state is a row's own state at now.
func state(k *meta.Token, now time.Time) string {
	switch {
	case !k.RevokedAt.IsZero():
		return "revoked"
	case !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt):
		return "expired"
	}
	return "active"
}

func info(k meta.Token, st string, pol execpolicy.Policy) Info {
	perms, _ := ParsePerms(k.Perms)
	return Info{ID: k.ID, Tenant: k.Tenant, Workspaces: k.Pattern, Perms: perms, Label: k.Label, Parent: k.ParentID,
		CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt, State: st, Exec: pol}
}

// execPolicyKey is the setting holding token id's exec policy (tokens
// created before exec policies have none: the zero policy).
func execPolicyKey(id string) string { return "token.exec." + id }

// putExecPolicy records token id's exec policy (nothing for the zero one).
func putExecPolicy(tx meta.Tx, id string, p execpolicy.Policy) error {
	if p.IsZero() {
		return nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return tx.SetSetting(execPolicyKey(id), string(b))
}

// execPolicy reads token id's exec policy.
func execPolicy(tx meta.Tx, id string) (execpolicy.Policy, error) {
	var p execpolicy.Policy
	raw, err := tx.Setting(execPolicyKey(id))
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return p, fmt.Errorf("token %s: exec policy: %w: %w", id, errdefs.ErrCorrupt, err)
	}
	return p, nil
}

// List returns the tokens by may see (nil: all), oldest first: an admin
// of a tenant sees the tenant's (of AnyTenant, all), any other token
// itself and the tokens minted from it, directly or not.
func (t *Tokens) List(ctx context.Context, by *Scope) ([]Info, error) {
	out := []Info{}
	err := t.meta.View(ctx, func(tx meta.Tx) error {
		rows, err := tx.Tokens()
		if err != nil {
			return err
		}
		now, err := tx.Now()
		if err != nil {
			return err
		}
		byID := map[string]*meta.Token{}
		for i := range rows {
			byID[rows[i].ID] = &rows[i]
		}
		for _, k := range rows {
			if by != nil && !manages(by, &k, byID) {
				continue
			}
			pol, err := execPolicy(tx, k.ID)
			if err != nil {
				return err
			}
			out = append(out, info(k, chainState(&k, byID, now), pol))
		}
		return nil
	})
	return out, err
}

// chainState is the state of k with its ancestors'.
func chainState(k *meta.Token, byID map[string]*meta.Token, now time.Time) string {
	for i := 0; k != nil && i < maxChain; i++ {
		if st := state(k, now); st != "active" {
			return st
		}
		k = byID[k.ParentID]
	}
	return "active"
}

// manages reports whether scope by may see and revoke k.
func manages(by *Scope, k *meta.Token, byID map[string]*meta.Token) bool {
	if by.Perms&Admin != 0 && (by.Tenant == AnyTenant || by.Tenant == k.Tenant) {
		return true
	}
	for i := 0; k != nil && i < maxChain; i++ {
		if k.ID == by.TokenID {
			return true
		}
		k = byID[k.ParentID]
	}
	return false
}

// Revoke revokes token id, and with it every token minted from it. by
// (nil: the store's owner) must manage it (List); a token it does not is
// fs.ErrNotExist, as a missing one.
func (t *Tokens) Revoke(ctx context.Context, by *Scope, id string) error {
	err := t.meta.Update(ctx, func(tx meta.Tx) error {
		if by != nil {
			rows, err := tx.Tokens()
			if err != nil {
				return err
			}
			byID := map[string]*meta.Token{}
			for i := range rows {
				byID[rows[i].ID] = &rows[i]
			}
			if k := byID[id]; k == nil || !manages(by, k, byID) {
				return fmt.Errorf("token %q: %w", id, fs.ErrNotExist)
			}
		}
		return tx.RevokeToken(id)
	})
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	t.forget()
	return nil
}
