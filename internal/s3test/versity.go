package s3test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/forkspace/forkspace/internal/citest"
)

// VersityVersion is the versitygw release scripts/test.sh installs.
const VersityVersion = "v1.8.0"

// Versity is a running versitygw: a real S3 gateway (posix backend on a
// temporary directory) that checks SigV4 signatures and honours
// conditional requests, behind a counting proxy on 127.0.0.1. Its methods
// are safe for concurrent use.
type Versity struct {
	// URL is the proxy's endpoint (requests through it are counted).
	URL string
	// Direct is versitygw's own endpoint (not counted).
	Direct string

	client *s3.Client // talks to Direct, for Seed, Object and Remove
	cmd    *exec.Cmd

	mu     sync.Mutex
	counts map[string]int
}

// versityBinary finds versitygw: $VERSITYGW, then PATH, then the cache
// scripts/test.sh installs it into. Missing, the test fails in CI
// (CI=true) and is skipped elsewhere.
func versityBinary(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("VERSITYGW"); p != "" {
		return p
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "forkspace-test", "bin", "versitygw")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	const msg = "versitygw not found: scripts/test.sh installs it (go install github.com/versity/versitygw/cmd/versitygw@" + VersityVersion + ")"
	citest.Missing(tb, "%s", msg)
	return ""
}

// StartVersity runs versitygw with the given buckets (created empty) until
// the test ends. The root account is AccessKey/SecretKey.
func StartVersity(tb testing.TB, buckets ...string) *Versity {
	tb.Helper()
	bin := versityBinary(tb)
	dir := tb.TempDir()
	port, err := freePort()
	if err != nil {
		tb.Fatal(err)
	}
	v := &Versity{Direct: "http://" + port, counts: map[string]int{}}
	v.cmd = exec.Command(bin, "--access", AccessKey, "--secret", SecretKey, "--region", Region,
		"--port", port, "--quiet", "posix", dir)
	var logs bytes.Buffer
	v.cmd.Stdout, v.cmd.Stderr = &logs, &logs
	if err := v.cmd.Start(); err != nil {
		tb.Fatalf("start versitygw: %v", err)
	}
	exited := make(chan struct{})
	go func() { v.cmd.Wait(); close(exited) }()
	tb.Cleanup(func() {
		v.cmd.Process.Kill()
		<-exited
	})
	v.client = s3.New(s3.Options{
		Region:       Region,
		BaseEndpoint: aws.String(v.Direct),
		UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: AccessKey, SecretAccessKey: SecretKey}, nil
		}),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	ctx := context.Background()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, err := v.client.ListBuckets(ctx, &s3.ListBucketsInput{})
		if err == nil {
			break
		}
		select {
		case <-exited:
			tb.Fatalf("versitygw exited: %s", logs.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("versitygw never answered: %v\n%s", err, logs.String())
		}
	}
	for _, b := range buckets {
		if _, err := v.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			tb.Fatalf("create bucket %s: %v", b, err)
		}
	}
	target, _ := url.Parse(v.Direct)
	proxy := httputil.NewSingleHostReverseProxy(target)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v.mu.Lock()
		v.counts[r.Method+" "+r.URL.Path]++
		v.mu.Unlock()
		proxy.ServeHTTP(w, r) // the Host header stays the one the client signed
	})}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	v.URL = "http://" + ln.Addr().String()
	return v
}

// freePort returns a loopback address no one listens on right now.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Seed stores an object directly (not counted) and returns its ETag.
func (v *Versity) Seed(tb testing.TB, bucket, key string, data []byte) string {
	tb.Helper()
	out, err := v.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data)})
	if err != nil {
		tb.Fatalf("seed %s/%s: %v", bucket, key, err)
	}
	return aws.ToString(out.ETag)
}

// Remove deletes an object directly (not counted).
func (v *Versity) Remove(tb testing.TB, bucket, key string) {
	tb.Helper()
	if _, err := v.client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
		tb.Fatalf("remove %s/%s: %v", bucket, key, err)
	}
}

// Object returns an object's bytes, read directly (not counted), and
// whether it exists.
func (v *Versity) Object(tb testing.TB, bucket, key string) ([]byte, bool) {
	tb.Helper()
	out, err := v.client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		var nsk interface{ ErrorCode() string }
		if errors.As(err, &nsk) && (nsk.ErrorCode() == "NoSuchKey" || nsk.ErrorCode() == "NotFound") {
			return nil, false
		}
		tb.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		tb.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	return data, true
}

// Keys lists the keys under prefix, read directly (not counted).
func (v *Versity) Keys(tb testing.TB, bucket, prefix string) []string {
	tb.Helper()
	var keys []string
	pages := s3.NewListObjectsV2Paginator(v.client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		if err != nil {
			tb.Fatalf("list %s/%s: %v", bucket, prefix, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys
}

// Count is how many requests with this method reached path ("/bucket" or
// "/bucket/key") through the proxy.
func (v *Versity) Count(method, path string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.counts[method+" "+path]
}

// Reset zeroes the counters.
func (v *Versity) Reset() {
	v.mu.Lock()
	defer v.mu.Unlock()
	clear(v.counts)
}

// String names the server in failure messages.
func (v *Versity) String() string { return fmt.Sprintf("versitygw at %s (proxy %s)", v.Direct, v.URL) }
