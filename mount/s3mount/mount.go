package s3mount

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/internal/s3client"
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
	reqTime  time.Duration // bounds each request (Options.Timeout)
}

// timedOut adds the cause of ctx's end to err when the request's own
// timeout ended it.
func timedOut(ctx context.Context, err error) error {
	if c := context.Cause(ctx); err != nil && errors.Is(c, ErrUnreachable) {
		return fmt.Errorf("%w (%w)", c, err)
	}
	return err
}

// timeout bounds one request (a stalled server fails it, ErrUnreachable).
func (m *Mount) timeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, m.reqTime, fmt.Errorf("%w: no answer within %v", ErrUnreachable, m.reqTime))
}

var (
	_ mount.Lazy         = (*Mount)(nil)
	_ mount.Writable     = (*Mount)(nil)
	_ mount.PrefixLister = (*Mount)(nil)
	_ mount.PageLister   = (*Mount)(nil)
)

// Open builds a Mount. It does not contact the server: an unreachable
// endpoint or a refused credential shows up on the first List or Fetch.
// A missing bucket is fs.ErrInvalid.
func Open(o Options) (*Mount, error) {
	if o.Bucket == "" {
		return nil, fmt.Errorf("open s3 mount: %w: bucket is required", fs.ErrInvalid)
	}
	client := s3client.New(s3client.Config{
		Region:      o.Region,
		Endpoint:    o.Endpoint,
		PathStyle:   o.PathStyle,
		Credentials: o.Credentials,
		MaxAttempts: o.MaxAttempts,
		HTTPClient:  o.HTTPClient,
	})
	return &Mount{
		client:   client,
		bucket:   o.Bucket,
		prefix:   cleanPrefix(o.Prefix),
		pageSize: o.PageSize,
		readOnly: o.ReadOnly,
		reqTime:  cmp.Or(o.Timeout, DefaultTimeout),
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
	return m.list(ctx, m.prefix, nil)
}

// ListPages implements mount.PageLister: List, showing each page to page
// as it arrives and stopping at its first error (the listing's error).
func (m *Mount) ListPages(ctx context.Context, page func([]mount.Entry) error) ([]mount.Entry, error) {
	return m.list(ctx, m.prefix, page)
}

// ListPrefix implements mount.PrefixLister: the objects below directory
// rel only.
func (m *Mount) ListPrefix(ctx context.Context, rel string) ([]mount.Entry, error) {
	key, err := m.key("list", rel)
	if err != nil {
		return nil, err
	}
	return m.list(ctx, key+"/", nil)
}

// list enumerates the objects under prefix (which is below m.prefix),
// showing each page to page when it is not nil.
func (m *Mount) list(ctx context.Context, prefix string, seen func([]mount.Entry) error) ([]mount.Entry, error) {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(m.bucket)}
	if prefix != "" {
		in.Prefix = aws.String(prefix)
	}
	if m.pageSize > 0 {
		in.MaxKeys = aws.Int32(m.pageSize)
	}
	var entries []mount.Entry
	pages := s3.NewListObjectsV2Paginator(m.client, in)
	for pages.HasMorePages() {
		pctx, cancel := m.timeout(ctx)
		page, err := pages.NextPage(pctx)
		err = timedOut(pctx, err)
		cancel()
		if err != nil {
			return nil, wrap("list", m.bucket+"/"+prefix, err)
		}
		first := len(entries)
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
		if seen != nil {
			if err := seen(entries[first:]); err != nil {
				return nil, err
			}
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
	ctx, cancel := m.timeout(ctx)
	defer cancel()
	out, err := m.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(m.bucket), Key: aws.String(key)})
	if err != nil {
		return nil, wrap("fetch", rel, timedOut(ctx, err))
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, wrap("fetch", rel, timedOut(ctx, err))
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
	switch ifVersion {
	case mount.Unconditional:
	case "":
		in.IfNoneMatch = aws.String("*")
	default:
		in.IfMatch = aws.String(ifVersion)
	}
	ctx, cancel := m.timeout(ctx)
	defer cancel()
	out, err := m.client.PutObject(ctx, in)
	if err = timedOut(ctx, err); err != nil {
		kind := s3client.Classify(err)
		if ifVersion != mount.Unconditional && s3client.IsCode(err, "NoSuchKey", "ObjectParentIsFile", "ExistingObjectIsDirectory") {
			// S3 answers If-Match on a deleted object with NoSuchKey;
			// versitygw refuses a key below an object, or on a directory
			// of keys, with 409: someone else's state is in the way.
			kind = errdefs.ErrConflict
		}
		return "", wrapAs("put", rel, kind, err)
	}
	return aws.ToString(out.ETag), nil
}

// Delete removes rel with one DeleteObject request, with If-Match
// ifVersion unless it is "" or Unconditional (an object changed upstream
// is errdefs.ErrConflict); a missing object is not an error.
func (m *Mount) Delete(ctx context.Context, rel, ifVersion string) error {
	key, err := m.key("delete", rel)
	if err != nil {
		return err
	}
	if m.readOnly {
		return &fs.PathError{Op: "delete", Path: rel, Err: errdefs.ErrReadOnly}
	}
	in := &s3.DeleteObjectInput{Bucket: aws.String(m.bucket), Key: aws.String(key)}
	if ifVersion != "" && ifVersion != mount.Unconditional {
		in.IfMatch = aws.String(ifVersion)
	}
	ctx, cancel := m.timeout(ctx)
	defer cancel()
	_, err = m.client.DeleteObject(ctx, in)
	if err = timedOut(ctx, err); err != nil {
		kind := s3client.Classify(err)
		if kind == fs.ErrNotExist {
			return nil
		}
		return wrapAs("delete", rel, kind, err)
	}
	return nil
}
