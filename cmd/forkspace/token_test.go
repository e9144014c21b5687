package main

import (
	"strings"
	"testing"

	"github.com/forkspace/forkspace/auth"
)

// TestTokenCommands: token create, list and revoke on a store the CLI
// opens, then through a running server, which then needs a token on
// every command; a token mints only narrower ones, and revoking it
// revokes what it minted.
func TestTokenCommands(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w1")
	c.fails(exitUsage, nil, "token", "create")
	c.fails(exitUsage, nil, "token", "create", "--perm", "fly")
	c.fails(exitUsage, nil, "token", "create", "--perm", "read", "--expires", "soon")
	admin := strings.TrimSpace(c.ok(nil, "token", "create", "--tenant", "*", "--perm", "all", "--label", "admin"))
	if !strings.HasPrefix(admin, auth.Prefix) {
		t.Fatalf("token create printed %q", admin)
	}
	var reader auth.Created
	c.json(&reader, "token", "create", "--workspaces", "w*", "--perm", "read", "--expires", "7d")
	if reader.Token == "" || reader.Workspaces != "w*" || reader.Perms != auth.Read || reader.ExpiresAt.IsZero() || reader.S3SecretKey == "" {
		t.Fatalf("token create --json: %+v", reader)
	}
	var list []auth.Info
	c.json(&list, "token", "list")
	if len(list) != 2 || list[0].Label != "admin" || strings.Contains(c.ok(nil, "token", "list"), admin) {
		t.Fatalf("token list: %+v", list)
	}

	_, stop := serve(t, c.store)
	defer stop()
	// The store holds tokens: the server needs one.
	msg := c.fails(exitReadOnly, nil, "workspace", "list")
	if !strings.Contains(msg, "token") {
		t.Errorf("without a token: %q", msg)
	}
	c.fails(exitReadOnly, nil, "--token", "fks_bogus", "workspace", "list")
	if out := c.ok(nil, "--token", admin, "workspace", "list"); !strings.Contains(out, "w1") {
		t.Errorf("admin lists %q", out)
	}
	c.fails(exitReadOnly, []byte("x"), "--token", reader.Token, "-w", "w1", "put", "-", "f")
	c.fails(exitReadOnly, nil, "--token", reader.Token, "token", "create", "--perm", "write")
	var child auth.Created
	c.json(&child, "--token", reader.Token, "token", "create", "--workspaces", "w1", "--perm", "read", "--expires", "1h")
	if child.Parent != reader.ID || child.Workspaces != "w1" {
		t.Errorf("minted %+v", child)
	}
	c.ok(nil, "--token", child.Token, "workspace", "info", "w1")
	c.json(&list, "--token", reader.Token, "token", "list")
	if len(list) != 2 {
		t.Errorf("the reader manages %+v", list)
	}
	c.fails(exitNotFound, nil, "--token", reader.Token, "token", "revoke", list[0].ID+"x")
	c.ok(nil, "--token", admin, "token", "revoke", reader.ID)
	c.fails(exitReadOnly, nil, "--token", child.Token, "workspace", "info", "w1")
	c.json(&list, "--token", admin, "token", "list")
	for _, i := range list {
		if want := map[bool]string{true: "revoked", false: "active"}[i.ID != list[0].ID]; i.State != want {
			t.Errorf("after revoking the reader: %s is %s", i.ID, i.State)
		}
	}
}

// TestServeNeedsTLS: with tokens, a non-loopback address still needs TLS.
func TestServeNeedsTLS(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "token", "create", "--perm", "all")
	msg := c.fails(exitUsage, nil, "serve", "--addr", "0.0.0.0:0")
	if !strings.Contains(msg, "--tls-cert") {
		t.Errorf("serve --addr 0.0.0.0:0 with tokens and no TLS: %q", msg)
	}
	c.fails(exitUsage, nil, "serve", "--tls-cert", "x.pem")
}
