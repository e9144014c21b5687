package s3gw_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/internal/storetest"
	"github.com/forkspace/forkspace/s3gw"
)

const (
	accessKey = "AKIDFORKSPACE"
	secretKey = "s3cr3t-key-for-tests"
)

var quiet = slog.New(slog.DiscardHandler)

type env struct {
	st  *forkspace.Store
	ws  *forkspace.Workspace
	url string
	s3  *s3.Client
}

// start opens a store with workspace "w" (quota 1 MB, one file, one
// checkpoint "cp") and serves it over S3 on loopback; s3 is a client of
// the AWS SDK with the right key.
func start(t *testing.T, opts ...func(*s3gw.Options)) *env {
	t.Helper()
	st, ws := storetest.Open(t, 1_000_000)
	o := s3gw.Options{Logger: quiet, Credentials: func(k string) (string, bool) { return secretKey, k == accessKey }}
	for _, f := range opts {
		f(&o)
	}
	srv := httptest.NewServer(s3gw.New(st, o))
	t.Cleanup(srv.Close)
	return &env{st: st, ws: ws, url: srv.URL, s3: client(srv.URL, accessKey, secretKey)}
}

func client(url, key, secret string) *s3.Client {
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(url),
		UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: key, SecretAccessKey: secret}, nil
		}),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		RetryMaxAttempts:           1,
	})
}

func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return fmt.Sprint(err)
}

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return `"` + hex.EncodeToString(s[:]) + `"`
}

// TestObjects: put, get (whole and ranged), head, list with prefix and
// delimiter and pages, copy, delete — and each visible through the
// library at once, the other way round too, with the changes audited.
func TestObjects(t *testing.T) {
	ctx := context.Background()
	e := start(t)
	body := []byte("hello from s3")
	put, err := e.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("w"), Key: aws.String("dir/sub/a.txt"), Body: bytes.NewReader(body)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(put.ETag) != md5hex(body) {
		t.Errorf("PUT ETag %s, want the MD5 %s", aws.ToString(put.ETag), md5hex(body))
	}
	if b, err := e.ws.ReadFile(ctx, "dir/sub/a.txt"); err != nil || !bytes.Equal(b, body) {
		t.Fatalf("library read after PUT: %q %v", b, err)
	}
	if err := e.ws.WriteFile(ctx, "dir/b.txt", []byte("from the library"), 0o644); err != nil {
		t.Fatal(err)
	}
	get, err := e.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("w"), Key: aws.String("dir/b.txt")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(get.Body)
	if string(got) != "from the library" || aws.ToString(get.ETag) != md5hex(got) {
		t.Errorf("GET after a library write: %q ETag %s", got, aws.ToString(get.ETag))
	}
	rng, err := e.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("w"), Key: aws.String("dir/b.txt"), Range: aws.String("bytes=5-7")})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(rng.Body); string(got) != "the" {
		t.Errorf("ranged GET: %q", got)
	}
	for i := range 5 {
		if _, err := e.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("w"), Key: aws.String(fmt.Sprintf("list/f%d", i)), Body: strings.NewReader("x")}); err != nil {
			t.Fatal(err)
		}
	}
	var keys []string
	p := s3.NewListObjectsV2Paginator(e.s3, &s3.ListObjectsV2Input{Bucket: aws.String("w"), Prefix: aws.String("list/"), MaxKeys: aws.Int32(2)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	if strings.Join(keys, " ") != "list/f0 list/f1 list/f2 list/f3 list/f4" {
		t.Errorf("paged listing: %v", keys)
	}
	top, err := e.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("w"), Delimiter: aws.String("/")})
	if err != nil {
		t.Fatal(err)
	}
	var prefixes []string
	for _, cp := range top.CommonPrefixes {
		prefixes = append(prefixes, aws.ToString(cp.Prefix))
	}
	if strings.Join(prefixes, " ") != "dir/ list/" || len(top.Contents) != 1 || aws.ToString(top.Contents[0].Key) != "keep.txt" {
		t.Errorf("delimited listing: prefixes %v, %d objects", prefixes, len(top.Contents))
	}
	if _, err := e.s3.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("w"), Key: aws.String("copy.txt"), CopySource: aws.String("w/dir/sub/a.txt")}); err != nil {
		t.Fatal(err)
	}
	if b, _ := e.ws.ReadFile(ctx, "copy.txt"); !bytes.Equal(b, body) {
		t.Errorf("copied: %q", b)
	}
	if _, err := e.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("w"), Key: aws.String("copy.txt")}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.Stat(ctx, "copy.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after DELETE: %v", err)
	}
	if _, err := e.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("w"), Key: aws.String("copy.txt")}); err == nil {
		t.Error("HEAD of a deleted object succeeded")
	}
	entries, err := e.st.AuditLog().Entries(ctx, audit.Filter{WorkspaceID: e.ws.ID()})
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, en := range entries {
		if en.Actor == "s3:"+accessKey {
			tools = append(tools, en.Tool)
		}
	}
	if s := strings.Join(tools, " "); !strings.Contains(s, "s3.PutObject") || !strings.Contains(s, "s3.DeleteObjects") {
		t.Errorf("audit log by s3: %v", tools)
	}
}

// TestConditionalAndAtomicPut: If-None-Match and If-Match decide before
// anything is written, and a PUT past the quota changes nothing.
func TestConditionalAndAtomicPut(t *testing.T) {
	ctx := context.Background()
	e := start(t)
	_, err := e.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("w"), Key: aws.String("keep.txt"), Body: strings.NewReader("overwritten"), IfNoneMatch: aws.String("*")})
	if code(err) != "PreconditionFailed" {
		t.Errorf("If-None-Match * on an existing key: %v", err)
	}
	_, err = e.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("w"), Key: aws.String("keep.txt"), Body: strings.NewReader("overwritten"), IfMatch: aws.String(`"0123"`)})
	if code(err) != "PreconditionFailed" {
		t.Errorf("If-Match with a wrong ETag: %v", err)
	}
	_, err = e.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("w"), Key: aws.String("keep.txt"), Body: bytes.NewReader(make([]byte, 2_000_000))})
	if code(err) != "QuotaExceeded" {
		t.Errorf("PUT past the quota: %v", err)
	}
	storetest.Unchanged(t, e.ws, "refused PUTs")
	if _, err := e.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("w"), Key: aws.String("keep.txt"), Body: strings.NewReader("replaced"), IfMatch: aws.String(md5hex([]byte("acknowledged")))}); err != nil {
		t.Errorf("If-Match with the right ETag: %v", err)
	}
}

// TestRefusals: unsigned, wrongly signed, unknown-key and skewed requests
// are 403; a checkpoint bucket is read-only; workspaces are not deleted.
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	e := start(t)
	resp, err := http.Get(e.url + "/w/keep.txt")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("unsigned GET: %d", resp.StatusCode)
	}
	for name, c := range map[string]*s3.Client{
		"wrong secret": client(e.url, accessKey, "not-the-secret"),
		"unknown key":  client(e.url, "AKIDNOBODY", secretKey),
	} {
		_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("w"), Key: aws.String("keep.txt")})
		if c := code(err); c != "SignatureDoesNotMatch" && c != "InvalidAccessKeyId" {
			t.Errorf("%s: %v", name, err)
		}
		_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("w"), Key: aws.String("keep.txt"), Body: strings.NewReader("evil")})
		if err == nil {
			t.Errorf("%s: PUT accepted", name)
		}
	}
	skewed := start(t, func(o *s3gw.Options) { o.Now = func() time.Time { return time.Now().Add(time.Hour) } })
	if _, err := skewed.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("w"), Key: aws.String("keep.txt")}); code(err) != "RequestTimeTooSkewed" {
		t.Errorf("a request an hour off: %v", err)
	}
	if _, err := e.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("w@cp"), Key: aws.String("x"), Body: strings.NewReader("x")}); code(err) != "AccessDenied" {
		t.Errorf("PUT into a checkpoint: %v", err)
	}
	if _, err := e.s3.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("w")}); code(err) != "AccessDenied" {
		t.Errorf("DeleteBucket: %v", err)
	}
	if _, err := e.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("w"), Key: aws.String("a/../../b"), Body: strings.NewReader("x")}); code(err) != "InvalidArgument" {
		t.Errorf("PUT of an escaping key: %v", err)
	}
	get, err := e.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("w@cp"), Key: aws.String("keep.txt")})
	if err != nil {
		t.Fatalf("GET from the checkpoint: %v", err)
	}
	if b, _ := io.ReadAll(get.Body); string(b) != "acknowledged" {
		t.Errorf("GET from the checkpoint: %q", b)
	}
	storetest.Unchanged(t, e.ws, "refusals")
}

// TestPresigned: a presigned GET and PUT work until they expire; a
// changed signature does not.
func TestPresigned(t *testing.T) {
	ctx := context.Background()
	e := start(t)
	ps := s3.NewPresignClient(e.s3)
	get, err := ps.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("w"), Key: aws.String("keep.txt")}, s3.WithPresignExpires(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(get.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "acknowledged" {
		t.Errorf("presigned GET: %d %q", resp.StatusCode, b)
	}
	bad := strings.Replace(get.URL, "X-Amz-Signature=", "X-Amz-Signature=0", 1)
	if resp, err := http.Get(bad); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("tampered presigned GET: %v %v", resp.StatusCode, err)
	}
	put, err := ps.PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("w"), Key: aws.String("up.txt")}, s3.WithPresignExpires(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("PUT", put.URL, strings.NewReader("uploaded"))
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("presigned PUT: %v %v", resp.StatusCode, err)
	}
	if b, _ := e.ws.ReadFile(ctx, "up.txt"); string(b) != "uploaded" {
		t.Errorf("after a presigned PUT: %q", b)
	}
	late := start(t, func(o *s3gw.Options) { o.Now = func() time.Time { return time.Now().Add(2 * time.Minute) } })
	lateGet, _ := s3.NewPresignClient(late.s3).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("w"), Key: aws.String("keep.txt")}, s3.WithPresignExpires(time.Minute))
	if resp, err := http.Get(lateGet.URL); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("expired presigned GET: %v %v", resp.StatusCode, err)
	}
}

// TestMultipart: a 20 MiB object in 5 MiB parts lands whole; completing
// with a part never uploaded or with parts out of order writes nothing.
func TestMultipart(t *testing.T) {
	ctx := context.Background()
	e := start(t)
	if _, err := e.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("big")}); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 20<<20)
	for i := range data {
		data[i] = byte(i * 7 / 13)
	}
	up, err := e.s3.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("big"), Key: aws.String("blob.bin")})
	if err != nil {
		t.Fatal(err)
	}
	var parts []types.CompletedPart
	for i := 0; i*5<<20 < len(data); i++ {
		p, err := e.s3.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("big"), Key: aws.String("blob.bin"), UploadId: up.UploadId, PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(data[i*5<<20 : (i+1)*5<<20])})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, types.CompletedPart{ETag: p.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	// A part never uploaded, and parts out of order: refused, nothing
	// written, the upload still open.
	bigWS, err := e.st.Workspace(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][]types.CompletedPart{
		"a missing part": append(append([]types.CompletedPart{}, parts...), types.CompletedPart{ETag: parts[0].ETag, PartNumber: aws.Int32(9)}),
		"reordered":      {parts[1], parts[0], parts[2], parts[3]},
	} {
		_, err := e.s3.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("big"), Key: aws.String("blob.bin"), UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: bad}})
		if c := code(err); c != "InvalidPart" && c != "InvalidPartOrder" {
			t.Errorf("complete with %s: %v", name, err)
		}
		if _, err := bigWS.Stat(ctx, "blob.bin"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("complete with %s left blob.bin: %v", name, err)
		}
	}
	if _, err := e.s3.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("big"), Key: aws.String("blob.bin"), UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		t.Fatal(err)
	}
	if b, err := bigWS.ReadFile(ctx, "blob.bin"); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("multipart object: %d bytes, %v", len(b), err)
	}
}
