package remotetest_test

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/blob/s3blob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/internal/pgtest"
	"github.com/forkspace/forkspace/internal/s3client"
	"github.com/forkspace/forkspace/internal/s3test"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/pgmeta"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var quiet = slog.New(slog.DiscardHandler)

// bucketStore opens a store on a new PostgreSQL database with its blobs
// under prefix in bucket (closed when the test ends), one object per blob
// (packs off: its tests name each blob's object; packs in a bucket:
// TestPacksOnS3, blob/packblob).
func bucketStore(t *testing.T, v *s3test.Versity, bucket, prefix string) *forkspace.Store {
	t.Helper()
	st, _ := openBucketStore(t, v, bucket, prefix, forkspace.PackOptions{Disable: true})
	return st
}

// openBucketStore is bucketStore with packing options, returning the
// store's metadata too.
func openBucketStore(t *testing.T, v *s3test.Versity, bucket, prefix string, packs forkspace.PackOptions) (*forkspace.Store, meta.Store) {
	t.Helper()
	ctx := context.Background()
	m, err := pgmeta.Open(ctx, pgtest.DB(t), pgmeta.Options{Logger: quiet, Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := forkspace.Open(ctx, forkspace.Options{Meta: m, Blobs: bucketBlobs(t, v, bucket, prefix), InlineMax: 512, Logger: quiet,
		Packs: packs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, m
}

// bucketBlobs opens a blob store under prefix in bucket.
func bucketBlobs(t *testing.T, v *s3test.Versity, bucket, prefix string) *s3blob.Store {
	t.Helper()
	b, err := s3blob.Open(s3blob.Options{
		Bucket: bucket, Prefix: prefix, Endpoint: v.URL, PathStyle: true, Region: s3test.Region,
		Credentials: &s3client.Credentials{AccessKeyID: s3test.AccessKey, SecretAccessKey: s3test.SecretKey},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// keys lists the bucket's keys under prefix, sorted.
func keys(t *testing.T, v *s3test.Versity, bucket, prefix string) []string {
	t.Helper()
	k := v.Keys(t, bucket, prefix)
	slices.Sort(k)
	return k
}

// blobKeys returns the keys the blob store keeps hashes under:
// PREFIX/blobs/HEX (decision 019).
func blobKeys(prefix string, hs ...cas.Hash) []string {
	var out []string
	for _, h := range hs {
		out = append(out, prefix+"/blobs/"+h.String())
	}
	slices.Sort(out)
	return out
}

// minus returns the elements of a not in b.
func minus(a, b []string) []string {
	return slices.DeleteFunc(slices.Clone(a), func(s string) bool { return slices.Contains(b, s) })
}

func random(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

func short(keys []string) string {
	var out []string
	for _, k := range keys {
		out = append(out, k[strings.LastIndex(k, "/")+1:][:12])
	}
	return strings.Join(out, " ")
}
