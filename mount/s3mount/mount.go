package s3mount

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/mount"
)

// Mount is a prefix of a bucket. It implements mount.Lazy and
// mount.Writable; it is safe for concurrent use.
type Mount struct {
	client   *s3.Client
	bucket   string
	prefix   string // "" or ending in "/"
	pageSize int32
	readOnly bool
}

var (
	_ mount.Lazy     = (*Mount)(nil)
	_ mount.Writable = (*Mount)(nil)
)

// Open builds a Mount. It does not contact the server: an unreachable
// endpoint or a refused credential shows up on the first List or Fetch.
// A missing bucket is fs.ErrInvalid.
func Open(o Options) (*Mount, error) {
	if o.Bucket == "" {
		return nil, fmt.Errorf("open s3 mount: %w: bucket is required", fs.ErrInvalid)
	}
	region := o.Region
	if region == "" {
		region = envRegion()
	}
	if region == "" {
		region = DefaultRegion
	}
	creds := o.Credentials
	if creds == nil {
		creds = envCredentials()
	}
	cfg := aws.Config{
		Region:                     region,
		RetryMaxAttempts:           o.MaxAttempts,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if creds != nil {
		c := aws.Credentials{
			AccessKeyID:     creds.AccessKeyID,
			SecretAccessKey: creds.SecretAccessKey,
			SessionToken:    creds.SessionToken,
			Source:          "s3mount",
		}
		cfg.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return c, nil })
	}
	if o.HTTPClient != nil {
		cfg.HTTPClient = o.HTTPClient
	}
	client := s3.NewFromConfig(cfg, func(so *s3.Options) {
		so.UsePathStyle = o.PathStyle
		if o.Endpoint != "" {
			so.BaseEndpoint = aws.String(o.Endpoint)
		}
	})
	return &Mount{
		client:   client,
		bucket:   o.Bucket,
		prefix:   cleanPrefix(o.Prefix),
		pageSize: o.PageSize,
		readOnly: o.ReadOnly,
	}, nil
}

// cleanPrefix turns "a", "/a/" or "a/" into "a/", and "" or "/" into "".
func cleanPrefix(p string) string {
	p = strings.Trim(p, "/")
	if p == "" {
		return ""
	}
	return p + "/"
}

// Kind is "s3".
func (m *Mount) Kind() string { return "s3" }

// List enumerates the objects under the prefix, one ListObjectsV2 request
// per page, in key order. Errors: see the package doc; nothing is returned
// with an error.
func (m *Mount) List(ctx context.Context) ([]mount.Entry, error) {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(m.bucket)}
	if m.prefix != "" {
		in.Prefix = aws.String(m.prefix)
	}
	if m.pageSize > 0 {
		in.MaxKeys = aws.Int32(m.pageSize)
	}
	var entries []mount.Entry
	pages := s3.NewListObjectsV2Paginator(m.client, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, wrap("list", m.bucket+"/"+m.prefix, err)
		}
		for _, obj := range page.Contents {
			rel, ok := m.rel(aws.ToString(obj.Key))
			if !ok {
				continue
			}
			entries = append(entries, mount.Entry{
				Path:    rel,
				Size:    aws.ToInt64(obj.Size),
				Mode:    0o644,
				ModTime: aws.ToTime(obj.LastModified),
				Version: aws.ToString(obj.ETag),
			})
		}
	}
	return dropShadowed(entries), nil
}

// rel strips the prefix from key; ok is false for keys that are not valid
// relative file paths.
func (m *Mount) rel(key string) (string, bool) {
	rel, ok := strings.CutPrefix(key, m.prefix)
	if !ok || !fs.ValidPath(rel) || rel == "." {
		return "", false
	}
	return rel, true
}

// dropShadowed removes the entries whose path is also a directory of
// another entry ("a" beside "a/b").
func dropShadowed(entries []mount.Entry) []mount.Entry {
	dirs := map[string]bool{}
	for _, e := range entries {
		for i := range len(e.Path) {
			if e.Path[i] == '/' {
				dirs[e.Path[:i]] = true
			}
		}
	}
	if len(dirs) == 0 {
		return entries
	}
	kept := entries[:0]
	for _, e := range entries {
		if !dirs[e.Path] {
			kept = append(kept, e)
		}
	}
	return kept
}

// key is the object key of rel, or an error for an invalid path.
func (m *Mount) key(op, rel string) (string, error) {
	if !fs.ValidPath(rel) || rel == "." {
		return "", &fs.PathError{Op: op, Path: rel, Err: fs.ErrInvalid}
	}
	return m.prefix + rel, nil
}

// Fetch returns one object's bytes with one GetObject request. A missing
// object is fs.ErrNotExist.
func (m *Mount) Fetch(ctx context.Context, rel string) ([]byte, error) {
	key, err := m.key("fetch", rel)
	if err != nil {
		return nil, err
	}
	out, err := m.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(m.bucket), Key: aws.String(key)})
	if err != nil {
		return nil, wrap("fetch", rel, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, wrap("fetch", rel, err)
	}
	return data, nil
}

// Put stores rel with one PutObject request and returns the new ETag. With
// ifVersion set the write carries If-Match: a changed or deleted object
// fails with errdefs.ErrConflict and is left as it is upstream.
func (m *Mount) Put(ctx context.Context, rel string, data []byte, ifVersion string) (string, error) {
	key, err := m.key("put", rel)
	if err != nil {
		return "", err
	}
	if m.readOnly {
		return "", &fs.PathError{Op: "put", Path: rel, Err: errdefs.ErrReadOnly}
	}
	in := &s3.PutObjectInput{
		Bucket:        aws.String(m.bucket),
		Key:           aws.String(key),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	}
	if ifVersion != "" {
		in.IfMatch = aws.String(ifVersion)
	}
	out, err := m.client.PutObject(ctx, in)
	if err != nil {
		kind := classify(err)
		if ifVersion != "" && kind == fs.ErrNotExist {
			// S3 answers If-Match on a deleted object with NoSuchKey.
			kind = errdefs.ErrConflict
		}
		return "", wrapAs("put", rel, kind, err)
	}
	return aws.ToString(out.ETag), nil
}

// Delete removes rel with one DeleteObject request; a missing object is
// not an error.
func (m *Mount) Delete(ctx context.Context, rel string) error {
	key, err := m.key("delete", rel)
	if err != nil {
		return err
	}
	if m.readOnly {
		return &fs.PathError{Op: "delete", Path: rel, Err: errdefs.ErrReadOnly}
	}
	_, err = m.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(m.bucket), Key: aws.String(key)})
	if err != nil {
		kind := classify(err)
		if kind == fs.ErrNotExist {
			return nil
		}
		return wrapAs("delete", rel, kind, err)
	}
	return nil
}
