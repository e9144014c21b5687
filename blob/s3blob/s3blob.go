package s3blob

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/internal/s3client"
)

var (
	_ blob.Store       = (*Store)(nil)
	_ blob.Locator     = (*Store)(nil)
	_ blob.Packable    = (*Store)(nil)
	_ blob.RangeReader = (*Store)(nil)
)

// Defaults of Options.
const (
	DefaultMaxAttempts = 5
	DefaultTimeout     = time.Minute
)

// Options configure a Store. The zero value of each field means the
// default.
type Options struct {
	// Bucket is required.
	Bucket string
	// Prefix is where the store's objects live; leading and trailing
	// slashes are ignored ("a", "a/" and "/a/" are the same).
	Prefix string
	// Region, Endpoint, PathStyle, Credentials and HTTPClient configure
	// the client (see s3client.Config).
	Region      string
	Endpoint    string
	PathStyle   bool
	Credentials *s3client.Credentials
	HTTPClient  *http.Client
	// MaxAttempts bounds the attempts of one operation, retries included
	// (default DefaultMaxAttempts).
	MaxAttempts int
	// MaxBackoff bounds the wait between two attempts (default: the
	// SDK's, 20s).
	MaxBackoff time.Duration
	// Timeout bounds each attempt, body included (default
	// DefaultTimeout): a server that stops answering fails the attempt,
	// which is retried.
	Timeout time.Duration
}

// Store is a blob.Store over a bucket prefix; it is safe for concurrent
// use, also by several processes sharing the prefix.
type Store struct {
	client   *s3.Client
	bucket   string
	dir      string // "<prefix>/blobs/" or "blobs/"
	attempts int
	timeout  time.Duration
	closed   atomic.Bool
	// unconditional is set once the server refused If-None-Match.
	unconditional atomic.Bool
}

// Open returns a Store. It does not contact the server: an unreachable
// endpoint or a refused credential shows up on the first request. A
// missing bucket name is fs.ErrInvalid.
func Open(o Options) (*Store, error) {
	if o.Bucket == "" {
		return nil, fmt.Errorf("open s3 blob store: %w: bucket is required", fs.ErrInvalid)
	}
	attempts := cmp.Or(o.MaxAttempts, DefaultMaxAttempts)
	timeout := cmp.Or(o.Timeout, DefaultTimeout)
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	if hc.Timeout == 0 {
		c := *hc
		c.Timeout = timeout // per attempt: the SDK retries a timed-out one
		hc = &c
	}
	client := s3client.New(s3client.Config{
		Region: o.Region, Endpoint: o.Endpoint, PathStyle: o.PathStyle,
		Credentials: o.Credentials, MaxAttempts: attempts, MaxBackoff: o.MaxBackoff,
		HTTPClient: hc,
	})
	dir := "blobs/"
	if p := strings.Trim(o.Prefix, "/"); p != "" {
		dir = p + "/blobs/"
	}
	return &Store{client: client, bucket: o.Bucket, dir: dir, attempts: attempts, timeout: timeout}, nil
}

// Location names where the blobs live, "s3://BUCKET/PREFIX" (the endpoint
// left out: one bucket may be reached by several), so a metadata store can
// refuse to be opened over another store's blobs.
func (s *Store) Location() string {
	return "s3://" + s.bucket + "/" + strings.TrimSuffix(strings.TrimSuffix(s.dir, "blobs/"), "/")
}

// PackStore returns the store of pack objects beside s, under
// PREFIX/packs/ (blob.Packable): same bucket, client and options, its own
// Close.
func (s *Store) PackStore() blob.Store {
	return &Store{
		client: s.client, bucket: s.bucket, dir: strings.TrimSuffix(s.dir, "blobs/") + "packs/",
		attempts: s.attempts, timeout: s.timeout,
	}
}

// Key returns the object key of blob id.
func (s *Store) Key(id cas.Hash) string { return s.dir + id.String() }

func (s *Store) check(ctx context.Context, op string, id cas.Hash) error {
	if s.closed.Load() {
		return fmt.Errorf("%s blob %s: %w", op, id, fs.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s blob %s: %w", op, id, err)
	}
	return nil
}

// wrap translates an SDK error at the boundary, keeping the cause.
func wrap(op string, id cas.Hash, err error) error {
	if s := s3client.Classify(err); s != nil {
		return fmt.Errorf("%s blob %s: %w: %w", op, id, s, err)
	}
	return fmt.Errorf("%s blob %s: %w", op, id, err)
}

// Put stores data under id with a conditional create (see the package
// documentation).
func (s *Store) Put(ctx context.Context, id cas.Hash, data []byte) error {
	if err := s.check(ctx, "put", id); err != nil {
		return err
	}
	if s.unconditional.Load() {
		if ok, err := s.present(ctx, id, len(data)); err != nil || ok {
			return err
		}
		return s.put(ctx, id, data, false)
	}
	err := s.put(ctx, id, data, true)
	switch {
	case err == nil:
		return nil
	case s3client.Status(err) == http.StatusPreconditionFailed || s3client.Status(err) == http.StatusConflict:
		// The blob exists (or a concurrent conditional write of it is
		// in flight: its bytes are ours). Keep it unless it is damaged.
		ok, perr := s.present(ctx, id, len(data))
		if perr != nil || ok {
			return perr
		}
		return s.put(ctx, id, data, false)
	case refusedCondition(err):
		s.unconditional.Store(true)
		return s.Put(ctx, id, data)
	default:
		return err
	}
}

// refusedCondition reports whether the server refused If-None-Match as
// unsupported rather than evaluating it.
func refusedCondition(err error) bool {
	if s3client.Status(err) == http.StatusNotImplemented || s3client.IsCode(err, "NotImplemented") {
		return true
	}
	return s3client.Status(err) == http.StatusBadRequest && strings.Contains(strings.ToLower(err.Error()), "if-none-match")
}

// present reports whether blob id is stored with size bytes.
func (s *Store) present(ctx context.Context, id cas.Hash, size int) (bool, error) {
	info, err := s.Stat(ctx, id)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil && info.Size == int64(size), err
}

func (s *Store) put(ctx context.Context, id cas.Hash, data []byte, conditional bool) error {
	// No Content-MD5: the request signs the body's SHA-256
	// (x-amz-content-sha256), which the server checks (TestDamagedOnTheWay).
	in := &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(s.Key(id)),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
		ContentType:   aws.String("application/octet-stream"),
	}
	if conditional {
		in.IfNoneMatch = aws.String("*")
	}
	if _, err := s.client.PutObject(ctx, in); err != nil {
		return wrap("put", id, err)
	}
	return nil
}

// Get reads the requested range (see blob.Store.Get) and verifies
// whole-blob reads. A body cut short is fetched again.
func (s *Store) Get(ctx context.Context, id cas.Hash, off, length int64) ([]byte, error) {
	if err := s.check(ctx, "get", id); err != nil {
		return nil, err
	}
	if off < 0 {
		return nil, fmt.Errorf("get blob %s: %w: negative offset %d", id, fs.ErrInvalid, off)
	}
	whole := off == 0 && length < 0
	in := &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.Key(id))}
	want := int64(-1)
	if !whole {
		// S3 answers a range at or past the end with 416, and a ranged
		// read is rare (chunks are read whole): learn the size first.
		info, err := s.Stat(ctx, id)
		if err != nil {
			return nil, err
		}
		if off > info.Size {
			return nil, fmt.Errorf("get blob %s: %w: offset %d outside size %d", id, fs.ErrInvalid, off, info.Size)
		}
		end := info.Size
		if length >= 0 {
			end = min(end, off+length)
		}
		if end == off {
			return []byte{}, nil
		}
		in.Range = aws.String(fmt.Sprintf("bytes=%d-%d", off, end-1))
		want = end - off
	}
	return s.getChecked(ctx, id, in, whole, want)
}

// ReadRange reads n bytes at off of a blob the caller knows holds them
// (blob.RangeReader): one ranged GetObject, no HeadObject. A shorter blob
// is errdefs.ErrCorrupt.
func (s *Store) ReadRange(ctx context.Context, id cas.Hash, off, n int64) ([]byte, error) {
	if err := s.check(ctx, "get", id); err != nil {
		return nil, err
	}
	if off < 0 || n < 0 {
		return nil, fmt.Errorf("get blob %s: %w: range %d+%d", id, fs.ErrInvalid, off, n)
	}
	if n == 0 {
		return []byte{}, nil
	}
	in := &s3.GetObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(s.Key(id)),
		Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1)),
	}
	data, err := s.getChecked(ctx, id, in, false, n)
	if s3client.Status(err) == http.StatusRequestedRangeNotSatisfiable {
		return nil, fmt.Errorf("get blob %s: %w: range %d+%d outside the object: %w", id, errdefs.ErrCorrupt, off, n, err)
	}
	return data, err
}

// getChecked runs in until its body arrives whole (at most s.attempts
// times), then checks its length against want (unless negative) and, for
// a whole blob, its address.
func (s *Store) getChecked(ctx context.Context, id cas.Hash, in *s3.GetObjectInput, whole bool, want int64) ([]byte, error) {
	var err error
	for range s.attempts {
		var data []byte
		data, err = s.get(ctx, id, in)
		if err == nil && want >= 0 && int64(len(data)) != want {
			// The blob changed size under us: only damage does that.
			return nil, fmt.Errorf("get blob %s: %w: range of %d bytes returned %d", id, errdefs.ErrCorrupt, want, len(data))
		}
		if err == nil {
			if whole && !cas.Verify(id, data) {
				return nil, fmt.Errorf("get blob %s: %w: %d bytes that do not match the address", id, errdefs.ErrCorrupt, len(data))
			}
			return data, nil
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) || ctx.Err() != nil {
			break
		}
	}
	return nil, err
}

// get runs one GetObject (the SDK retries what fails before the body) and
// reads its whole body, which must have the length the server announced.
func (s *Store) get(ctx context.Context, id cas.Hash, in *s3.GetObjectInput) ([]byte, error) {
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		return nil, wrap("get", id, err)
	}
	defer out.Body.Close()
	n := aws.ToInt64(out.ContentLength)
	buf := bytes.NewBuffer(make([]byte, 0, max(n, 0)))
	if _, err := buf.ReadFrom(out.Body); err != nil {
		return nil, fmt.Errorf("get blob %s: read body: %w: %w", id, io.ErrUnexpectedEOF, err)
	}
	if out.ContentLength != nil && int64(buf.Len()) != n {
		return nil, fmt.Errorf("get blob %s: read %d of %d bytes: %w", id, buf.Len(), n, io.ErrUnexpectedEOF)
	}
	return buf.Bytes(), nil
}

// Stat returns the object's size and LastModified.
func (s *Store) Stat(ctx context.Context, id cas.Hash) (blob.Info, error) {
	if err := s.check(ctx, "stat", id); err != nil {
		return blob.Info{}, err
	}
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.Key(id))})
	if err != nil {
		return blob.Info{}, wrap("stat", id, err)
	}
	return blob.Info{ID: id, Size: aws.ToInt64(out.ContentLength), ModTime: aws.ToTime(out.LastModified)}, nil
}

// List pages through the keys below the store's prefix, skipping any key
// that is not a blob of this store.
func (s *Store) List(ctx context.Context, fn func(blob.Info) error) error {
	if s.closed.Load() {
		return fmt.Errorf("list blobs: %w", fs.ErrClosed)
	}
	pages := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(s.bucket), Prefix: aws.String(s.dir), Delimiter: aws.String("/"),
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			if c := s3client.Classify(err); c != nil {
				return fmt.Errorf("list blobs: %w: %w", c, err)
			}
			return fmt.Errorf("list blobs: %w", err)
		}
		for _, o := range page.Contents {
			id, err := cas.Parse(strings.TrimPrefix(aws.ToString(o.Key), s.dir))
			if err != nil {
				continue // not a blob of this store
			}
			if err := fn(blob.Info{ID: id, Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Delete removes the object; a missing one is not an error.
func (s *Store) Delete(ctx context.Context, id cas.Hash) error {
	if err := s.check(ctx, "delete", id); err != nil {
		return err
	}
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.Key(id))})
	if err != nil && !errors.Is(s3client.Classify(err), fs.ErrNotExist) {
		return wrap("delete", id, err)
	}
	return nil
}

// Close marks the store closed. Later calls, Close included, fail with
// fs.ErrClosed; calls already running finish.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return fmt.Errorf("close s3 blob store: %w", fs.ErrClosed)
	}
	return nil
}
