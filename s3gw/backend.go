package s3gw

import (
	"context"
	"crypto/md5"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/johannesboyne/gofakes3"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/vfs"
)

// backend is the gofakes3.Backend of a store: buckets are workspaces (and
// "NAME@CHECKPOINT", read-only), keys are slash paths in them.
type backend struct {
	st *forkspace.Store
	// ctx carries the actor of the requests this backend serves (one
	// backend per access key: gofakes3 passes no context).
	ctx context.Context
	// etags caches the MD5 of file contents by file version, since S3
	// clients take a single-part object's ETag for the MD5 of its bytes
	// and the store hashes with BLAKE3.
	etags *etagCache
}

var _ gofakes3.Backend = (*backend)(nil)

// mtimeMeta is the metadata key rclone and others keep a file's
// modification time in (seconds since the epoch, with a fraction).
const mtimeMeta = "X-Amz-Meta-Mtime"

// tree opens bucket for reading.
func (b *backend) tree(bucket string) (*vfs.FS, error) {
	var (
		f   *vfs.FS
		err error
	)
	if strings.Contains(bucket, "@") {
		f, err = b.st.Snapshot(b.ctx, bucket)
	} else {
		var ws *forkspace.Workspace
		ws, err = b.st.Workspace(b.ctx, bucket)
		if ws != nil {
			f = ws.FS
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, gofakes3.BucketNotFound(bucket)
	}
	return f, s3Error(err)
}

// keyPath turns an object key into a workspace path; a key ending in "/"
// names a directory (a "folder" object).
func keyPath(key string) (string, bool, error) {
	dir := strings.HasSuffix(key, "/")
	p, err := vfs.CleanPath(strings.TrimSuffix(key, "/"))
	if err != nil || p == "." || p != strings.TrimSuffix(key, "/") {
		return "", false, gofakes3.ErrorMessagef(gofakes3.ErrInvalidArgument, "key %q is not a clean relative path (no empty, . or .. elements)", key)
	}
	return p, dir, nil
}

func (b *backend) ListBuckets() ([]gofakes3.BucketInfo, error) {
	infos, err := b.st.List(b.ctx)
	if err != nil {
		return nil, s3Error(err)
	}
	out := make([]gofakes3.BucketInfo, 0, len(infos))
	for _, in := range infos {
		if auth.Allowed(b.ctx, auth.Read, forkspace.TenantFrom(b.ctx), in.Name) != nil {
			continue // a token lists only what it reaches
		}
		out = append(out, gofakes3.BucketInfo{Name: in.Name, CreationDate: gofakes3.NewContentTime(in.CreatedAt)})
	}
	return out, nil
}

func (b *backend) BucketExists(name string) (bool, error) {
	_, err := b.tree(name)
	if err != nil && gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchBucket) {
		return false, nil
	}
	return err == nil, err
}

func (b *backend) CreateBucket(name string) error {
	_, err := b.st.Create(b.ctx, name, forkspace.CreateOptions{})
	if errors.Is(err, fs.ErrExist) {
		return gofakes3.ResourceError(gofakes3.ErrBucketAlreadyExists, name)
	}
	if errors.Is(err, fs.ErrInvalid) {
		return gofakes3.ErrorMessagef(gofakes3.ErrInvalidBucketName, "%v", err)
	}
	return s3Error(err)
}

// DeleteBucket is refused before it reaches the backend (see the
// package documentation); these answer if it ever does.
func (b *backend) DeleteBucket(name string) error      { return errDeleteBucket }
func (b *backend) ForceDeleteBucket(name string) error { return errDeleteBucket }

var errDeleteBucket = gofakes3.ErrorMessage(gofakes3.ErrNotImplemented, "workspaces are deleted with the CLI, the API or the tools, not through S3")

// object lists one entry of a listing.
type object struct {
	key  string
	size int64
	mod  time.Time
	p    string // workspace path
	a    *vfs.Attr
}

// ListBucket lists the keys under the prefix's directory in key order:
// regular files, and empty directories as "dir/" keys.
func (b *backend) ListBucket(name string, prefix *gofakes3.Prefix, page gofakes3.ListBucketPage) (*gofakes3.ObjectList, error) {
	f, err := b.tree(name)
	if err != nil {
		return nil, err
	}
	if prefix == nil {
		prefix = &gofakes3.Prefix{}
	}
	start := "."
	if d := path.Dir(prefix.Prefix); prefix.HasPrefix && d != "." && d != "/" {
		start = d // only entries below it can match
	}
	var objs []object
	err = b.walk(f, start, &objs)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errdefs.ErrNotDir) {
		return nil, s3Error(err)
	}
	slices.SortFunc(objs, func(x, y object) int { return strings.Compare(x.key, y.key) })
	out := gofakes3.NewObjectList()
	var (
		match gofakes3.PrefixMatch
		last  string
		n     int64
	)
	for i, o := range objs {
		if page.HasMarker && o.key <= page.Marker {
			continue
		}
		if !prefix.Match(o.key, &match) {
			continue
		}
		if match.CommonPrefix {
			if match.MatchedPart == last {
				continue
			}
			out.AddPrefix(match.MatchedPart)
			last = match.MatchedPart
		} else {
			out.Add(&gofakes3.Content{
				Key: o.key, Size: o.size, LastModified: gofakes3.NewContentTime(o.mod),
				ETag: gofakes3.FormatETag(b.etags.get(b.ctx, f, name, o.p, o.a)),
			})
		}
		n++
		if page.MaxKeys > 0 && n >= page.MaxKeys && i < len(objs)-1 {
			out.NextMarker = o.key
			out.IsTruncated = true
			break
		}
	}
	return out, nil
}

// walk appends the objects under dir (a workspace path).
func (b *backend) walk(f *vfs.FS, dir string, objs *[]object) error {
	des, err := f.ReadDir(b.ctx, dir)
	if err != nil {
		return err
	}
	if len(des) == 0 && dir != "." {
		fi, err := f.Stat(b.ctx, dir)
		if err != nil {
			return err
		}
		*objs = append(*objs, object{key: dir + "/", mod: fi.ModTime()})
	}
	for _, de := range des {
		p := path.Join(dir, de.Name())
		if de.IsDir() {
			if err := b.walk(f, p, objs); err != nil {
				return err
			}
			continue
		}
		if !de.Type().IsRegular() {
			continue // symbolic links are not objects
		}
		fi, err := de.Info()
		if err != nil {
			return err
		}
		a, _ := fi.Sys().(*vfs.Attr)
		*objs = append(*objs, object{key: p, size: fi.Size(), mod: fi.ModTime(), p: p, a: a})
	}
	return nil
}

func (b *backend) HeadObject(bucket, key string) (*gofakes3.Object, error) {
	return b.object(bucket, key, nil, false)
}

func (b *backend) GetObject(bucket, key string, rng *gofakes3.ObjectRangeRequest) (*gofakes3.Object, error) {
	return b.object(bucket, key, rng, true)
}

func (b *backend) object(bucket, key string, rng *gofakes3.ObjectRangeRequest, contents bool) (*gofakes3.Object, error) {
	f, err := b.tree(bucket)
	if err != nil {
		return nil, err
	}
	p, isDir, err := keyPath(key)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat(b.ctx, p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errdefs.ErrNotDir) || (err == nil && fi.IsDir() != isDir) || (err == nil && !fi.IsDir() && !fi.Mode().IsRegular()) {
		return nil, gofakes3.KeyNotFound(key)
	}
	if err != nil {
		return nil, s3Error(err)
	}
	a, _ := fi.Sys().(*vfs.Attr)
	obj := &gofakes3.Object{
		Name: key, Size: fi.Size(),
		Metadata: map[string]string{
			"Last-Modified": fi.ModTime().UTC().Format(http.TimeFormat),
			mtimeMeta:       strconv.FormatFloat(float64(fi.ModTime().UnixNano())/1e9, 'f', 9, 64),
		},
	}
	if isDir {
		obj.Hash = md5.New().Sum(nil)
		obj.Contents = io.NopCloser(strings.NewReader(""))
		return obj, nil
	}
	obj.Hash = b.etags.get(b.ctx, f, bucket, p, a)
	if obj.Range, err = rng.Range(fi.Size()); err != nil {
		return nil, err
	}
	if !contents {
		obj.Contents = io.NopCloser(strings.NewReader(""))
		return obj, nil
	}
	h, err := f.Open(b.ctx, p)
	if err != nil {
		return nil, s3Error(err)
	}
	if obj.Range != nil {
		obj.Contents = readCloser{io.NewSectionReader(h, obj.Range.Start, obj.Range.Length), h}
	} else {
		obj.Contents = h
	}
	return obj, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// workspace opens bucket for writing.
func (b *backend) workspace(bucket string) (*forkspace.Workspace, error) {
	if strings.Contains(bucket, "@") {
		return nil, errReadOnly(bucket)
	}
	ws, err := b.st.Workspace(b.ctx, bucket)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, gofakes3.BucketNotFound(bucket)
	}
	return ws, s3Error(err)
}

// mutate runs fn as one audited batch on bucket: every change lands, or
// none does; the audit entry commits with the batch (audit.Commit).
func (b *backend) mutate(bucket, op string, args any, paths []string, fn func(f *vfs.FS) error) error {
	ws, err := b.workspace(bucket)
	if err != nil {
		return err
	}
	err = audit.Run(b.ctx, b.st.AuditLog(), audit.Call{WorkspaceID: ws.ID(), Tool: "s3." + op, Args: args}, func(ctx context.Context) ([]string, error) {
		if work, done := audit.Commit(ctx, paths); work != nil {
			ctx = vfs.WithCommit(ctx, work, done)
		}
		return paths, ws.Batch(ctx, fn)
	})
	return s3Error(err)
}

func (b *backend) PutObject(bucket, key string, meta map[string]string, input io.Reader, size int64, cond *gofakes3.PutConditions) (gofakes3.PutObjectResult, error) {
	p, isDir, err := keyPath(key)
	if err != nil {
		return gofakes3.PutObjectResult{}, err
	}
	args := struct {
		Key  string `json:"key"`
		Size int64  `json:"size"`
	}{key, size}
	sum := md5.New()
	var written *vfs.Attr // the file as the batch leaves it
	err = b.mutate(bucket, "PutObject", args, []string{p}, func(f *vfs.FS) error {
		if cond != nil {
			if err := b.checkConditions(f, bucket, p, cond); err != nil {
				return err
			}
		}
		if err := f.MkdirAll(b.ctx, path.Dir(p), 0o755); err != nil {
			return err
		}
		if isDir {
			return f.MkdirAll(b.ctx, p, 0o755)
		}
		n, err := f.WriteFileFrom(b.ctx, p, io.TeeReader(input, sum), 0o644)
		if err == nil && n != size {
			err = gofakes3.ErrorMessagef(gofakes3.ErrIncompleteBody, "received %d of %d bytes", n, size)
		}
		if err != nil {
			return err
		}
		if mt, ok := parseMtime(meta[mtimeMeta]); ok {
			if err := f.Chtimes(b.ctx, p, mt, mt); err != nil {
				return err
			}
		}
		fi, err := f.Stat(b.ctx, p)
		if err == nil {
			written, _ = fi.Sys().(*vfs.Attr)
		}
		return err
	})
	if err == nil && written != nil {
		b.etags.put(bucket, p, written, sum.Sum(nil))
	}
	if err != nil {
		// Read the rest of a refused body (within drainLimit) so that the
		// client reads the error: a server that answers and closes with a
		// body unread resets the connection, and the client sees the reset
		// instead of QuotaExceeded or PreconditionFailed.
		io.Copy(io.Discard, io.LimitReader(input, drainLimit))
	}
	return gofakes3.PutObjectResult{}, err
}

// drainLimit bounds what PutObject reads of a body it refused: past it
// the connection is closed (and the client may see a reset).
const drainLimit = 32 << 20

// checkConditions applies If-Match / If-None-Match to the object at p.
func (b *backend) checkConditions(f *vfs.FS, bucket, p string, cond *gofakes3.PutConditions) error {
	info := &gofakes3.ConditionalObjectInfo{}
	fi, err := f.Stat(b.ctx, p)
	switch {
	case err == nil && fi.Mode().IsRegular():
		a, _ := fi.Sys().(*vfs.Attr)
		info.Exists, info.Hash = true, b.etags.get(b.ctx, f, bucket, p, a)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return gofakes3.CheckPutConditions(cond, info)
}

func parseMtime(v string) (time.Time, bool) {
	if v == "" {
		return time.Time{}, false
	}
	sec, err := strconv.ParseFloat(v, 64)
	if err != nil || sec < 0 || sec > 1e11 {
		return time.Time{}, false
	}
	return time.Unix(0, int64(sec*1e9)), true
}

func (b *backend) DeleteObject(bucket, key string) (gofakes3.ObjectDeleteResult, error) {
	_, err := b.DeleteMulti(bucket, key)
	return gofakes3.ObjectDeleteResult{}, err
}

// DeleteMulti removes the objects in one batch; missing keys are deleted
// already (S3 semantics), and a "dir/" key removes an empty directory.
func (b *backend) DeleteMulti(bucket string, keys ...string) (gofakes3.MultiDeleteResult, error) {
	var res gofakes3.MultiDeleteResult
	paths := make([]string, 0, len(keys))
	for _, k := range keys {
		p, _, err := keyPath(k)
		if err != nil {
			return res, err
		}
		paths = append(paths, p)
	}
	err := b.mutate(bucket, "DeleteObjects", struct {
		Keys []string `json:"keys"`
	}{keys}, paths, func(f *vfs.FS) error {
		for i, p := range paths {
			fi, err := f.Lstat(b.ctx, p)
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errdefs.ErrNotDir) {
				continue
			}
			if err != nil {
				return err
			}
			if fi.IsDir() != strings.HasSuffix(keys[i], "/") {
				continue // "a" does not delete directory a, nor "a/" file a
			}
			if err := f.Remove(b.ctx, p); err != nil && !errors.Is(err, errdefs.ErrNotEmpty) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	for _, k := range keys {
		res.Deleted = append(res.Deleted, gofakes3.ObjectID{Key: k})
	}
	return res, nil
}

func (b *backend) CopyObject(srcBucket, srcKey, dstBucket, dstKey string, meta map[string]string) (gofakes3.CopyObjectResult, error) {
	return gofakes3.CopyObject(b, srcBucket, srcKey, dstBucket, dstKey, meta)
}

// etagCache keeps the MD5 of file versions: a version is the bucket, the
// path, the inode, its size and its change time, so any change through
// any surface makes a new entry.
type etagCache struct {
	mu sync.Mutex
	m  map[etagKey][]byte
}

type etagKey struct {
	bucket, path string
	ino          uint64
	size         int64
	ctime        int64
}

// maxETags bounds the cache; past it, it starts over.
const maxETags = 100_000

func newETagCache() *etagCache { return &etagCache{m: map[etagKey][]byte{}} }

func keyOf(bucket, p string, a *vfs.Attr) etagKey {
	return etagKey{bucket: bucket, path: p, ino: a.Ino, size: a.Size, ctime: a.Ctime.UnixNano()}
}

func (c *etagCache) put(bucket, p string, a *vfs.Attr, sum []byte) {
	if a == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxETags {
		clear(c.m)
	}
	c.m[keyOf(bucket, p, a)] = sum
}

// get returns the MD5 of the file at p (reading it once per version); a
// file it cannot read gets the MD5 of nothing.
func (c *etagCache) get(ctx context.Context, f *vfs.FS, bucket, p string, a *vfs.Attr) []byte {
	if a == nil {
		return md5.New().Sum(nil)
	}
	k := keyOf(bucket, p, a)
	c.mu.Lock()
	sum, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return sum
	}
	h := md5.New()
	if r, err := f.Open(ctx, p); err == nil {
		_, err = io.Copy(h, r)
		r.Close()
		if err != nil {
			return md5.New().Sum(nil)
		}
	}
	sum = h.Sum(nil)
	c.put(bucket, p, a, sum)
	return sum
}

// s3Error maps a store error to the S3 error it is (nil stays nil).
func s3Error(err error) error {
	var ec gofakes3.Error
	switch {
	case err == nil, errors.As(err, &ec):
		return err
	case errors.Is(err, errdefs.ErrQuota):
		return gofakes3.ErrorMessagef(errQuotaExceeded, "%v", err)
	case errors.Is(err, errdefs.ErrReadOnly):
		return gofakes3.ErrorMessagef(errAccessDenied, "%v", err)
	case errors.Is(err, errdefs.ErrNameTooLong):
		return gofakes3.ErrorMessagef(gofakes3.ErrKeyTooLong, "%v", err)
	case errors.Is(err, fs.ErrExist), errors.Is(err, errdefs.ErrNotDir), errors.Is(err, errdefs.ErrIsDir):
		return gofakes3.ErrorMessagef(errConflict, "%v", err)
	case errors.Is(err, fs.ErrInvalid):
		return gofakes3.ErrorMessagef(gofakes3.ErrInvalidArgument, "%v", err)
	case errors.Is(err, errdefs.ErrBusy):
		return gofakes3.ErrorMessagef(errSlowDown, "%v", err)
	}
	return gofakes3.ErrorMessagef(gofakes3.ErrInternal, "%v", err)
}

func errReadOnly(bucket string) error {
	return gofakes3.ErrorMessagef(errAccessDenied, "bucket %s is a checkpoint: read-only", bucket)
}

// Error codes gofakes3 does not define; status() gives their statuses.
const (
	errAccessDenied  gofakes3.ErrorCode = "AccessDenied"
	errQuotaExceeded gofakes3.ErrorCode = "QuotaExceeded"
	errConflict      gofakes3.ErrorCode = "OperationAborted"
	errSlowDown      gofakes3.ErrorCode = "SlowDown"
)
