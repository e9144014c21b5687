package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forkspace/forkspace/fusefs/fusetest"
)

// aDoor writes and reads whole files of workspace "w" through one
// surface of a running server.
type aDoor struct {
	name  string
	write func(t *testing.T, path, content string)
	read  func(t *testing.T, path string) string
}

// TestDoorsAgree is issue 13's read-after-write across doors: one serve
// process offers REST, MCP, FUSE, WebDAV and S3 over one store; a file written
// (and then overwritten) through any door reads back the same through
// every other as soon as the write returns — no delay, no stale cache.
func TestDoorsAgree(t *testing.T) {
	fusetest.Require(t)
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	t.Setenv("FORKSPACE_S3_ACCESS_KEY", "AKIDDOORS")
	t.Setenv("FORKSPACE_S3_SECRET_KEY", "doors-secret")
	mnt := t.TempDir()
	davAddr, s3Addr := freeAddr(t), freeAddr(t)
	mcpURL, stop := serve(t, c.store, "--fuse", mnt, "--webdav", davAddr, "--s3", s3Addr)
	defer stop()

	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "doors", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpURL + "?workspace=w"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	s3c := s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String("http://" + s3Addr), UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDDOORS", SecretAccessKey: "doors-secret"}, nil
		}),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	httpDo := func(t *testing.T, method, url, body string) string {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
		}
		return string(b)
	}
	api := strings.TrimSuffix(mcpURL, "/mcp") + "/v1/workspaces/w/files/"
	doors := []aDoor{
		// REST is what the Python and TypeScript SDKs, the dashboard and
		// the CLI beside a server speak.
		{"rest", func(t *testing.T, p, s string) { httpDo(t, "PUT", api+p, s) },
			func(t *testing.T, p string) string { return httpDo(t, "GET", api+p, "") }},
		{"mcp", func(t *testing.T, p, s string) {
			if text, isErr := mcpCall(t, cs, "write", map[string]any{"path": p, "content": s}); isErr {
				t.Fatal(text)
			}
		}, func(t *testing.T, p string) string {
			text, isErr := mcpCall(t, cs, "read", map[string]any{"path": p})
			if isErr {
				t.Fatal(text)
			}
			return text
		}},
		{"fuse", func(t *testing.T, p, s string) {
			if err := os.WriteFile(filepath.Join(mnt, "w", p), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, p string) string {
			b, err := os.ReadFile(filepath.Join(mnt, "w", p))
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}},
		{"webdav", func(t *testing.T, p, s string) { httpDo(t, "PUT", "http://"+davAddr+"/w/"+p, s) },
			func(t *testing.T, p string) string { return httpDo(t, "GET", "http://"+davAddr+"/w/"+p, "") }},
		{"s3", func(t *testing.T, p, s string) {
			if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("w"), Key: aws.String(p), Body: strings.NewReader(s)}); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, p string) string {
			out, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("w"), Key: aws.String(p)})
			if err != nil {
				t.Fatal(err)
			}
			defer out.Body.Close()
			b, _ := io.ReadAll(out.Body)
			return string(b)
		}},
	}
	check := func(writer aDoor, p, want string) {
		t.Helper()
		for _, r := range doors {
			got := r.read(t, p)
			if r.name == "mcp" {
				if !strings.Contains(got, want) {
					t.Errorf("written through %s, read through mcp: %q, want it to show %q", writer.name, got, want)
				}
			} else if got != want {
				t.Errorf("written through %s, read through %s: %q, want %q", writer.name, r.name, got, want)
			}
		}
	}
	// Every door writes a file and then overwrites every other door's,
	// each checked through all five right away (the overwrite catches a
	// door serving a cached copy).
	for _, w := range doors {
		p := "by-" + w.name + ".txt"
		want := fmt.Sprintf("first version, written through %s", w.name)
		w.write(t, p, want)
		check(w, p, want)
	}
	for _, w := range doors {
		for _, other := range doors {
			p := "by-" + other.name + ".txt"
			want := fmt.Sprintf("rewritten through %s, %d bytes longer than before", w.name, len(w.name)*7)
			w.write(t, p, want)
			check(w, p, want)
		}
	}
}
