package s3gw_test

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/internal/storetest"
	"github.com/forkspace/forkspace/s3gw"
)

// TestTokens: once the store holds tokens, S3 keys are tokens (ID and S3
// secret key) limited to their scope: a bucket outside it is
// NoSuchBucket exactly as a missing one, a read-only token cannot write,
// another tenant's token and a revoked one reach nothing, the listing
// shows only what the token reaches, and the old key pair stops working.
func TestTokens(t *testing.T) {
	ctx := context.Background()
	st, _ := storetest.Open(t, 1_000_000)
	tk, err := st.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s3gw.New(st, s3gw.Options{Logger: quiet, Tokens: tk,
		Credentials: func(k string) (string, bool) { return secretKey, k == accessKey }}))
	defer srv.Close()
	e := &env{st: st, url: srv.URL, s3: client(srv.URL, accessKey, secretKey)}
	if _, err := e.s3.ListBuckets(ctx, &s3.ListBucketsInput{}); err != nil {
		t.Fatalf("the key pair of Credentials before any token: %v", err)
	}
	other, err := e.st.Create(ctx, "other", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.WriteFile(ctx, "s", []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	mk := func(r auth.Request) *s3.Client {
		c, err := tk.Create(ctx, nil, r)
		if err != nil {
			t.Fatal(err)
		}
		return client(e.url, c.S3AccessKey, c.S3SecretKey)
	}
	rw := mk(auth.Request{Workspaces: "w", Perms: auth.Read | auth.Write})
	ro := mk(auth.Request{Workspaces: "w", Perms: auth.Read})
	acme := mk(auth.Request{Tenant: "acme", Perms: auth.All})
	revoked, err := tk.Create(ctx, nil, auth.Request{Perms: auth.All})
	if err != nil {
		t.Fatal(err)
	}
	if err := tk.Revoke(ctx, nil, revoked.ID); err != nil {
		t.Fatal(err)
	}

	get := func(c *s3.Client, bucket, key string) (string, error) {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			return "", err
		}
		defer out.Body.Close()
		b, err := io.ReadAll(out.Body)
		return string(b), err
	}
	if _, err := rw.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("w"), Key: aws.String("k"), Body: strings.NewReader("v")}); err != nil {
		t.Fatalf("rw PUT: %v", err)
	}
	if _, err := ro.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("w"), Key: aws.String("k2"), Body: strings.NewReader("v")}); code(err) != "AccessDenied" {
		t.Errorf("read-only PUT: %v", err)
	}
	if got, err := get(ro, "w", "k"); err != nil || got != "v" {
		t.Errorf("read-only GET: %q %v", got, err)
	}
	for _, c := range []struct {
		name   string
		client *s3.Client
	}{{"outside the pattern", rw}, {"another tenant", acme}} {
		_, err1 := get(c.client, "other", "s")
		_, err2 := get(c.client, "zz-missing", "s")
		if code(err1) != "NoSuchBucket" || code(err2) != "NoSuchBucket" {
			t.Errorf("%s: GET other: %v; GET missing: %v", c.name, err1, err2)
		}
		if c.client == acme {
			if _, err := get(acme, "w", "k"); code(err) != "NoSuchBucket" {
				t.Errorf("another tenant reads w: %v", err)
			}
		}
	}
	lb, err := rw.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil || len(lb.Buckets) != 1 || aws.ToString(lb.Buckets[0].Name) != "w" {
		t.Errorf("rw lists %+v, %v", lb, err)
	}
	if _, err := get(client(e.url, revoked.S3AccessKey, revoked.S3SecretKey), "w", "k"); code(err) != "InvalidAccessKeyId" {
		t.Errorf("revoked token: %v", err)
	}
	if _, err := get(e.s3, "w", "k"); code(err) != "InvalidAccessKeyId" {
		t.Errorf("the key pair of Credentials once tokens are on: %v", err)
	}
}
