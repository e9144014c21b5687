package metatest

import (
	"bytes"
	"context"
	"io/fs"
	"slices"
	"testing"
	"time"

	"github.com/forkspace/forkspace/meta"
)

func testTenants(t *testing.T, s meta.Store) {
	update(t, s, func(tx meta.Tx) error {
		for _, n := range []string{"acme", "beta", "acme"} {
			if err := tx.CreateTenant(n); err != nil {
				return err
			}
		}
		return nil
	})
	err := s.Update(context.Background(), func(tx meta.Tx) error { return tx.CreateTenant("") })
	wantErr(t, "CreateTenant of an empty name", err, fs.ErrInvalid)
	view(t, s, func(tx meta.Tx) error {
		ts, err := tx.Tenants()
		var names []string
		for _, tn := range ts {
			names = append(names, tn.Name)
			if tn.CreatedAt.IsZero() {
				t.Errorf("tenant %s has no creation time", tn.Name)
			}
		}
		if want := []string{"acme", "beta", meta.DefaultTenant}; err != nil || !slices.Equal(names, want) {
			t.Errorf("Tenants = %v, %v; want %v", names, err, want)
		}
		return nil
	})
}

func testTokens(t *testing.T, s meta.Store) {
	view(t, s, func(tx meta.Tx) error {
		if has, err := tx.HasTokens(); has || err != nil {
			t.Errorf("HasTokens of an empty store = %v, %v", has, err)
		}
		return nil
	})
	expires := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	root := meta.Token{ID: "tk1", Tenant: "acme", Pattern: "*", Perms: "read,write", Label: "ci", Hash: []byte("h1"), S3Secret: "s1"}
	child := meta.Token{ID: "tk2", Tenant: "acme", Pattern: "agent-1", Perms: "read", ExpiresAt: expires, ParentID: "tk1", Hash: []byte("h2")}
	update(t, s, func(tx meta.Tx) error {
		if err := tx.CreateToken(&root); err != nil {
			return err
		}
		return tx.CreateToken(&child)
	})
	if root.CreatedAt.IsZero() || !root.RevokedAt.IsZero() {
		t.Errorf("CreateToken wrote back CreatedAt %v RevokedAt %v", root.CreatedAt, root.RevokedAt)
	}
	for _, bad := range []meta.Token{
		{ID: "tk1", Tenant: "acme", Pattern: "*", Hash: []byte("x")},
		{Tenant: "acme", Pattern: "*"},
		{ID: "tk9", Pattern: "*"},
		{ID: "tk9", Tenant: "acme"},
	} {
		err := s.Update(context.Background(), func(tx meta.Tx) error { return tx.CreateToken(&bad) })
		if bad.ID == "tk1" {
			wantErr(t, "CreateToken of a taken ID", err, fs.ErrExist)
		} else {
			wantErr(t, "CreateToken with an empty field", err, fs.ErrInvalid)
		}
	}
	update(t, s, func(tx meta.Tx) error { return tx.RevokeToken("tk1") })
	var revokedAt time.Time
	view(t, s, func(tx meta.Tx) error {
		got, err := tx.Token("tk2")
		if err != nil || got.Pattern != "agent-1" || got.Perms != "read" || !got.ExpiresAt.Equal(expires) ||
			got.ParentID != "tk1" || !bytes.Equal(got.Hash, []byte("h2")) || !got.RevokedAt.IsZero() {
			t.Errorf("Token(tk2) = %+v, %v", got, err)
		}
		got, err = tx.Token("tk1")
		if err != nil || got.RevokedAt.IsZero() || got.Label != "ci" || got.S3Secret != "s1" || !got.ExpiresAt.IsZero() {
			t.Errorf("Token(tk1) after revoke = %+v, %v", got, err)
		} else {
			revokedAt = got.RevokedAt
		}
		_, err = tx.Token("tk9")
		wantErr(t, "Token of a missing ID", err, fs.ErrNotExist)
		all, err := tx.Tokens()
		if err != nil || len(all) != 2 || all[0].ID != "tk1" || all[1].ID != "tk2" {
			t.Errorf("Tokens = %+v, %v", all, err)
		}
		if has, err := tx.HasTokens(); !has || err != nil {
			t.Errorf("HasTokens = %v, %v", has, err)
		}
		return nil
	})
	// Revoking again keeps the first time; a missing token is an error.
	update(t, s, func(tx meta.Tx) error { return tx.RevokeToken("tk1") })
	view(t, s, func(tx meta.Tx) error {
		if got, err := tx.Token("tk1"); err != nil || !got.RevokedAt.Equal(revokedAt) {
			t.Errorf("revoked twice: %+v, %v; want revoked at %v", got, err, revokedAt)
		}
		return nil
	})
	err := s.Update(context.Background(), func(tx meta.Tx) error { return tx.RevokeToken("tk9") })
	wantErr(t, "RevokeToken of a missing ID", err, fs.ErrNotExist)
}
