package memmeta

import (
	"cmp"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/forkspace/forkspace/meta"
)

// CreateTenant implements meta.Tx.
func (t *tx) CreateTenant(name string) error {
	op := fmt.Sprintf("create tenant %q", name)
	if name == "" {
		return fmt.Errorf("%s: %w: empty name", op, fs.ErrInvalid)
	}
	if _, ok := t.s.tenants[name]; ok {
		return t.writable(op)
	}
	if err := t.write(op, "tenants", func() { t.s.tenants = maps.Clone(t.s.tenants) }); err != nil {
		return err
	}
	t.s.tenants[name] = t.store.now()
	return nil
}

// Tenants implements meta.Tx.
func (t *tx) Tenants() ([]meta.Tenant, error) {
	out := make([]meta.Tenant, 0, len(t.s.tenants)+1)
	for name, at := range t.s.tenants {
		out = append(out, meta.Tenant{Name: name, CreatedAt: at})
	}
	slices.SortFunc(out, func(a, b meta.Tenant) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// CreateToken implements meta.Tx.
func (t *tx) CreateToken(k *meta.Token) error { return t.createToken(k, false) }

// ImportToken implements meta.CopyTx.
func (t *tx) ImportToken(k meta.Token) error { return t.createToken(&k, true) }

// createToken inserts k, created now and not revoked or, with keepTimes,
// created and revoked when k says.
func (t *tx) createToken(k *meta.Token, keepTimes bool) error {
	op := fmt.Sprintf("create token %q", k.ID)
	if k.ID == "" || k.Tenant == "" || k.Pattern == "" {
		return fmt.Errorf("%s: %w: empty id, tenant or pattern", op, fs.ErrInvalid)
	}
	if err := t.write(op, "tokens", func() { t.s.tokens = maps.Clone(t.s.tokens) }); err != nil {
		return err
	}
	if _, ok := t.s.tokens[k.ID]; ok {
		return fmt.Errorf("%s: %w", op, fs.ErrExist)
	}
	if !keepTimes || k.CreatedAt.IsZero() {
		k.CreatedAt, k.RevokedAt = t.store.now(), time.Time{}
	}
	k.CreatedAt, k.RevokedAt = k.CreatedAt.Round(0), k.RevokedAt.Round(0)
	row := *k
	row.Hash = slices.Clone(k.Hash)
	t.s.tokens[k.ID] = row
	return nil
}

// Token implements meta.Tx.
func (t *tx) Token(id string) (*meta.Token, error) {
	k, ok := t.s.tokens[id]
	if !ok {
		return nil, notExist(fmt.Sprintf("get token %q", id))
	}
	k.Hash = slices.Clone(k.Hash)
	return &k, nil
}

// Tokens implements meta.Tx.
func (t *tx) Tokens() ([]meta.Token, error) {
	out := make([]meta.Token, 0, len(t.s.tokens))
	for _, k := range t.s.tokens {
		k.Hash = slices.Clone(k.Hash)
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b meta.Token) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// RevokeToken implements meta.Tx.
func (t *tx) RevokeToken(id string) error {
	op := fmt.Sprintf("revoke token %q", id)
	if err := t.write(op, "tokens", func() { t.s.tokens = maps.Clone(t.s.tokens) }); err != nil {
		return err
	}
	k, ok := t.s.tokens[id]
	if !ok {
		return notExist(op)
	}
	if k.RevokedAt.IsZero() {
		k.RevokedAt = t.store.now()
	}
	t.s.tokens[id] = k
	return nil
}

// HasTokens implements meta.Tx.
func (t *tx) HasTokens() (bool, error) { return len(t.s.tokens) > 0, nil }
