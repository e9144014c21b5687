package sqltx

import (
	"database/sql"
	"fmt"
	"io/fs"

	"github.com/forkspace/forkspace/meta"
)

const (
	tokenColumns = `id, tenant, pattern, perms, label, expires_at, parent_id, hash, s3_secret, created_at, revoked_at`

	qCreateTenant = `INSERT INTO tenants (name, created_at) VALUES ($1, ` + nowFunc + `()) ON CONFLICT (name) DO NOTHING`
	qTenants      = `SELECT name, created_at FROM tenants ORDER BY name`
	qCreateToken  = `INSERT INTO tokens (` + tokenColumns + `)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, COALESCE($10, ` + nowFunc + `()), $11) RETURNING created_at`
	qToken       = `SELECT ` + tokenColumns + ` FROM tokens WHERE id = $1`
	qTokens      = `SELECT ` + tokenColumns + ` FROM tokens ORDER BY created_at, id`
	qRevokeToken = `UPDATE tokens SET revoked_at = CASE WHEN revoked_at = 0 THEN ` + nowFunc + `() ELSE revoked_at END WHERE id = $1`
	qHasTokens   = `SELECT EXISTS (SELECT 1 FROM tokens)`
)

// CreateTenant implements meta.Tx.
func (t *Tx) CreateTenant(name string) error {
	op := fmt.Sprintf("create tenant %q", name)
	if name == "" {
		return fmt.Errorf("%s: %w: empty name", op, fs.ErrInvalid)
	}
	_, err := t.exec(op, qCreateTenant, name)
	return err
}

// Tenants implements meta.Tx.
func (t *Tx) Tenants() ([]meta.Tenant, error) {
	var out []meta.Tenant
	err := t.query("list tenants", qTenants, nil, func(rows *sql.Rows) error {
		var (
			tn      meta.Tenant
			created int64
		)
		if err := rows.Scan(&tn.Name, &created); err != nil {
			return err
		}
		tn.CreatedAt = fromNanos(created)
		out = append(out, tn)
		return nil
	})
	return out, err
}

// CreateToken implements meta.Tx.
func (t *Tx) CreateToken(k *meta.Token) error { return t.createToken(k, false) }

// ImportToken implements meta.CopyTx.
func (t *Tx) ImportToken(k meta.Token) error { return t.createToken(&k, true) }

// createToken inserts k, created now and not revoked or, with keepTimes,
// created and revoked when k says.
func (t *Tx) createToken(k *meta.Token, keepTimes bool) error {
	op := fmt.Sprintf("create token %q", k.ID)
	if k.ID == "" || k.Tenant == "" || k.Pattern == "" {
		return fmt.Errorf("%s: %w: empty id, tenant or pattern", op, fs.ErrInvalid)
	}
	var expires int64
	if !k.ExpiresAt.IsZero() {
		expires = k.ExpiresAt.UnixNano()
	}
	var (
		createdAt any
		revoked   int64
	)
	if keepTimes {
		createdAt = toNanos(k.CreatedAt)
		if !k.RevokedAt.IsZero() {
			revoked = k.RevokedAt.UnixNano()
		}
	}
	var created int64
	if err := t.queryRow(op, true, qCreateToken, []any{k.ID, k.Tenant, k.Pattern, k.Perms, k.Label, expires, k.ParentID, k.Hash, k.S3Secret, createdAt, revoked}, &created); err != nil {
		return err
	}
	k.CreatedAt = fromNanos(created)
	return nil
}

// Token implements meta.Tx.
func (t *Tx) Token(id string) (*meta.Token, error) {
	op := fmt.Sprintf("get token %q", id)
	var k *meta.Token
	err := t.query(op, qToken, []any{id}, func(rows *sql.Rows) (err error) {
		k, err = scanToken(rows)
		return err
	})
	if err == nil && k == nil {
		err = fmt.Errorf("%s: %w", op, errNoRow)
	}
	return k, err
}

// Tokens implements meta.Tx.
func (t *Tx) Tokens() ([]meta.Token, error) {
	var out []meta.Token
	err := t.query("list tokens", qTokens, nil, func(rows *sql.Rows) error {
		k, err := scanToken(rows)
		if err == nil {
			out = append(out, *k)
		}
		return err
	})
	return out, err
}

// RevokeToken implements meta.Tx.
func (t *Tx) RevokeToken(id string) error {
	return t.execOne(fmt.Sprintf("revoke token %q", id), qRevokeToken, id)
}

// HasTokens implements meta.Tx.
func (t *Tx) HasTokens() (bool, error) {
	var any bool
	err := t.queryRow("count tokens", false, qHasTokens, nil, &any)
	return any, err
}

func scanToken(rows *sql.Rows) (*meta.Token, error) {
	var (
		k                         meta.Token
		expires, created, revoked int64
	)
	if err := rows.Scan(&k.ID, &k.Tenant, &k.Pattern, &k.Perms, &k.Label, &expires, &k.ParentID, &k.Hash, &k.S3Secret, &created, &revoked); err != nil {
		return nil, err
	}
	k.CreatedAt = fromNanos(created)
	if expires != 0 {
		k.ExpiresAt = fromNanos(expires)
	}
	if revoked != 0 {
		k.RevokedAt = fromNanos(revoked)
	}
	return &k, nil
}
